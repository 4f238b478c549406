"""The soak's pauses: workers that stall past their lease, and holders overtaken on purpose.

A fencing token exists for one moment: a holder pauses (a GC pause, a slow disk) between
building a write and making it, its lease lapses, another worker takes the workflow over, and
the first wakes and writes. Random stalls make that moment rare — the stalled worker is as
likely to be SIGKILLed, or its successor to have written first — so the soak also stages it: a
worker about to commit a checkpoint pauses until the store shows another holder's token on its
workflow, and that successor waits at its first boundary until the overtaken holder's resume
has ended (its write went through or was refused). Only the timing changes: whatever a fenced
store refuses, it still refuses.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine, text
from sqlalchemy.pool import NullPool

from killpoint.contract import boundaries as b

POLL_S = 0.01
OVERTAKEN = "overtaken"


def waiting(folder: Path) -> dict[str, int]:
    """The workflows whose holder is paused until overtaken, and each holder's process id."""
    found = {}
    for marker in folder.iterdir():
        with contextlib.suppress(OSError, ValueError):  # gone, or not yet written
            found[marker.name] = int(marker.read_text())
    return found


@dataclass
class Pauses:
    """A worker's boundary hook: random stalls (probability `stall_p` at each boundary, up to
    twice the lease), and a pause until overtaken at a checkpoint about to be committed
    (probability `overtake_p`). A paused holder leaves a marker named after its workflow in
    `folder`, for its successor to see."""

    rng: random.Random
    url: str
    folder: Path
    ttl: float
    stall_p: float
    overtake_p: float
    tally: Callable[[str], object]  # counts `OVERTAKEN` each time a paused holder was
    workflow_id: str = ""  # the workflow being resumed: the worker sets it before each resume
    _marker: Path | None = field(default=None, repr=False)
    _conn: Connection | None = field(default=None, repr=False)

    def __call__(self, boundary: str, step: str | None = None) -> None:
        if boundary == b.LEASE_ACQUIRED:
            self._after_overtaken_holder()
        if boundary == b.CHECKPOINT_BUILT and self.rng.random() < self.overtake_p:
            self._until_overtaken()
        elif self.rng.random() < self.stall_p:
            time.sleep(self.rng.uniform(0, 2 * self.ttl))

    def resumed(self) -> None:
        """The worker's resume ended: a successor need not wait for it any longer."""
        if self._marker is not None:
            self._marker.unlink(missing_ok=True)
            self._marker = None

    def _until_overtaken(self) -> None:
        token = self._token()
        self._marker = self.folder / self.workflow_id
        self._marker.write_text(str(os.getpid()))
        deadline = time.monotonic() + 10 * self.ttl  # no one came: write as if never paused
        while self._token() == token and time.monotonic() < deadline:
            time.sleep(POLL_S)
        if self._token() != token:
            self.tally(OVERTAKEN)

    def _after_overtaken_holder(self) -> None:
        marker = self.folder / self.workflow_id
        deadline = time.monotonic() + 2 * self.ttl  # past it, the holder died in its pause
        while marker.exists() and time.monotonic() < deadline:
            time.sleep(POLL_S)
        marker.unlink(missing_ok=True)

    def _token(self) -> Any:
        if self._conn is None:  # one connection per worker process, each read committed alone
            engine = create_engine(self.url, poolclass=NullPool)
            self._conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        query = text("SELECT fencing_token FROM workflows WHERE workflow_id = :w")
        return self._conn.execute(query, {"w": self.workflow_id}).scalar()
