"""The files a units adapter keeps beside its framework: the harness's grants and the keyed
variant's attempt marks, under the store's work folder (`units.folder_of`).

Neither is a framework's state: a grant is the human's answer, which the harness writes when it
plays the human, and an attempt mark is what a careful user writes before a send no lookup or
key could make safe to repeat. Both are written so a worker's death cannot leave half of one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import JsonValue

from killpoint.contract.records import ApprovalRecord


class Grants:
    """Approvals granted by the harness, kept beside the framework: one JSON file per workflow,
    replaced atomically, so a grant survives the death of the worker that asked for it."""

    def __init__(self, root: Path) -> None:
        self.root = root / "grants"

    def _path(self, workflow_id: str) -> Path:
        return self.root / f"{_safe(workflow_id)}.json"

    def records(self, workflow_id: str) -> list[ApprovalRecord]:
        path = self._path(workflow_id)
        if not path.exists():
            return []
        return [ApprovalRecord.model_validate(r) for r in json.loads(path.read_text())]

    def grant(self, workflow_id: str, gate: str, actor: str, now: float, ttl_s: float) -> None:
        kept = [r for r in self.records(workflow_id) if r.gate != gate]
        granted = ApprovalRecord(
            workflow_id=workflow_id,
            gate=gate,
            status="granted",
            scope=gate,
            requested_at=now,
            actor=actor,
            expires_at=now + ttl_s,
        )
        self.root.mkdir(parents=True, exist_ok=True)
        _replace(self._path(workflow_id), [r.model_dump(mode="json") for r in (*kept, granted)])

    def valid(self, workflow_id: str, gate: str, now: float) -> bool:
        return any(
            r.gate == gate and r.status == "granted" and (r.expires_at or 0.0) > now
            for r in self.records(workflow_id)
        )


class Attempts:
    """The keyed variant's attempt marks: one line appended before each send that no lookup or
    key could make safe to repeat, written with one `os.write`, so it survives the death."""

    def __init__(self, root: Path) -> None:
        self.path = root / "attempts.jsonl"

    def marked(self, key: str) -> bool:
        if not self.path.exists():
            return False
        return any(json.loads(line)["key"] == key for line in self.path.read_text().splitlines())

    def mark(self, key: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (json.dumps({"key": key}) + "\n").encode())
        finally:
            os.close(fd)


def _safe(workflow_id: str) -> str:
    return workflow_id.replace("/", "_").replace(":", "_")


def _replace(path: Path, value: JsonValue) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value))
    os.replace(tmp, path)
