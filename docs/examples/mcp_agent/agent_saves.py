"""The agent's durable state: its message history, one file per save, numbered.

Each save is a whole history (pydantic-ai's own JSON of its messages) with the saga state it
has reached, written to a new file and renamed into place, so a SIGKILL leaves either the
save or none of it. A file's name holds its number and the worker that wrote it: two workers
that resumed one save both write the next number, and both files stay, as a fork the history
command shows (the harness's `monotonic_sequence` looks for it). Standard library only: the
history command reads these without importing pydantic-ai.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_NAME = re.compile(r"^save-(\d{6})-(.+)\.json$")


@dataclass(frozen=True)
class Outcome:
    """How a worker ends, as its status line says it."""

    status: str
    state: str
    sequence: int
    reason: str = ""

    def line(self) -> str:
        doc = {"status": self.status, "state": self.state, "sequence": self.sequence}
        if self.reason:
            doc["reason"] = self.reason
        return "killpoint-status " + json.dumps(doc)


class Saves:
    """One workflow's saves, in `folder`, written as `owner`."""

    def __init__(self, folder: Path, owner: str) -> None:
        self.folder = folder
        self.owner = re.sub(r"[^A-Za-z0-9_.-]", "_", owner)
        self.sequence = 0  # of the save this worker continues from, then of its own last

    def latest(self) -> dict[str, Any] | None:
        """The save with the highest number (of two with one number, either), or None."""
        files = self._files()
        if not files:
            return None
        number, path = max(files)
        self.sequence = number
        doc: dict[str, Any] = json.loads(path.read_text())
        return doc

    def save(
        self, messages: Any, *, state: str, status: str, reason: str, created_at: float
    ) -> None:
        self.sequence += 1
        self.folder.mkdir(parents=True, exist_ok=True)
        doc = {
            "sequence": self.sequence,
            "state": state,
            "status": status,
            "reason": reason,
            "created_at": created_at,
            "owner": self.owner,
            "messages": messages,
        }
        path = self.folder / f"save-{self.sequence:06d}-{self.owner}.json"
        tmp = path.with_suffix(".tmp")
        with tmp.open("w") as out:
            json.dump(doc, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        directory = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def records(self) -> list[dict[str, Any]]:
        """Every save as the harness's checkpoint record, in number order."""
        records = []
        for _, path in sorted(self._files()):
            doc = json.loads(path.read_text())
            records.append(
                {
                    "record": "checkpoint",
                    "sequence": doc["sequence"],
                    "state": doc["state"],
                    "status": doc["status"],
                    "reason": doc["reason"],
                    "created_at": doc["created_at"],
                    "size": path.stat().st_size,
                }
            )
        return records

    def _files(self) -> list[tuple[int, Path]]:
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.iterdir():
            match = _NAME.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return found
