"""Canaries: the world's secrets as the oracle looks for them, and what a scan of a run found.

A secret an engine stores is readable by anyone who can read the store, and a sealing key read
from it forges checkpoints the engine accepts. So after each run the harness looks for each of
the world's secrets (`killpoint.contract.secrets`) in every form an engine could have
stored it in — as it is, hex (either case), base64 (standard or URL-safe, at each of the three
alignments a value takes inside a longer encoded blob) — wherever it could have stored it
(`killpoint.harness.run.canary_scan`). The scan's findings go into the run's history as data, so
`secrets_kept` judges from the history alone. A finding names the secret and the place, never
the value: a report or a verdict must not leak what it caught.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict


class CanaryFinding(BaseModel):
    """One secret found in one place: its name ("checkpoint_key"), how it was written ("raw",
    "hex", "base64" …) and where ("store file store.sqlite-wal", "store rows checkpoints",
    "work folder artifacts/…", "history")."""

    model_config = ConfigDict(frozen=True)

    canary: str
    encoding: str
    where: str

    def label(self) -> str:
        return f"{self.canary} ({self.encoding}) in {self.where}"


class CanaryScan(BaseModel):
    """What a run's scan looked for and found. `unscanned` says what it could not read (a
    store it does not know how to read, a database that refused), which leaves the verdict
    unknown rather than true."""

    model_config = ConfigDict(frozen=True)

    canaries: list[str]
    findings: list[CanaryFinding] = []
    unscanned: list[str] = []


@dataclass(frozen=True)
class Needle:
    canary: str
    encoding: str
    data: bytes


def _base64_cores(raw: bytes, urlsafe: bool) -> list[bytes]:
    """The base64 text that `raw` becomes inside any longer blob, at each alignment: the groups
    of four characters made of its bytes alone (those it shares with the bytes around it
    depend on them)."""
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    cores = []
    for pad in range(3):
        whole = (pad + len(raw)) // 3 * 4
        cores.append(encode(b"\0" * pad + raw)[4 if pad else 0 : whole])
    return cores


def encodings(value: str) -> list[tuple[str, bytes]]:
    """(encoding, bytes) of each form a stored `value` may take, shortest forms left out."""
    raw = value.encode()
    forms = [("raw", raw), ("hex", raw.hex().encode()), ("HEX", raw.hex().upper().encode())]
    forms += [("base64", core) for core in _base64_cores(raw, urlsafe=False)]
    forms += [("base64url", core) for core in _base64_cores(raw, urlsafe=True)]
    seen: set[bytes] = set()
    unique = []
    for name, data in forms:
        if data not in seen and len(data) >= 16:
            seen.add(data)
            unique.append((name, data))
    return unique


class Needles:
    """Every encoding of every canary, searched for in one pass per place."""

    def __init__(self, canaries: Iterable[tuple[str, str]]) -> None:
        self.names: list[str] = []
        self.needles: list[Needle] = []
        for name, value in canaries:
            self.names.append(name)
            self.needles += [Needle(name, enc, data) for enc, data in encodings(value)]
        self.longest = max((len(n.data) for n in self.needles), default=0)

    def find(
        self, data: bytes, where: str, spans: Sequence[tuple[int, int]] | None = None
    ) -> list[CanaryFinding]:
        """The canaries in `data` (within `spans`, (start, end) pairs, if given), each once, in
        the first encoding found."""
        spans = [(0, len(data))] if spans is None else spans
        hits: dict[str, CanaryFinding] = {}
        for needle in self.needles:
            if needle.canary in hits:
                continue
            if any(data.find(needle.data, start, end) >= 0 for start, end in spans):
                hits[needle.canary] = CanaryFinding(
                    canary=needle.canary, encoding=needle.encoding, where=where
                )
        return list(hits.values())
