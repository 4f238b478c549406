"""A command engine's history: its `history` command's JSON lines, read as the oracle's records.

The command runs after a run's workers have ended, with the worker's variables
(`KILLPOINT_WORKFLOW_ID`, `KILLPOINT_SCENARIO`, `KILLPOINT_WORKDIR`, `KILLPOINT_DATABASE_URL`
…, and `KILLPOINT_ACTION=history`), and prints one JSON object per line, each naming its `record`:

    {"record": "checkpoint", "sequence": 1, "state": "charged", "status": "running", …}
    {"record": "effect", "operation_id": "…", "step": "charge", "status": "committed", …}
    {"record": "approval", "gate": "refund", "status": "granted", "expires_at": …}
    {"record": "compacted", "below": 3}

The fields are those of `CheckpointRecord`, `EffectRecord` and `ApprovalRecord`
(`docs/any-language.md`); a record's `workflow_id` may be left out. A line that is not one of
these is one clear error naming the line, never a guess: a history the harness misread would
be a verdict on the wrong evidence.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from pydantic import BaseModel, ValidationError

from killpoint.contract.errors import KillpointError
from killpoint.contract.records import ApprovalRecord, EffectRecord
from killpoint.harness.engines.command import Command
from killpoint.harness.protocol import CheckpointRecord, ReaderFactory, StoreHandle
from killpoint.harness.scenario import Scenario

_KINDS: dict[str, type[BaseModel]] = {
    "checkpoint": CheckpointRecord,
    "effect": EffectRecord,
    "approval": ApprovalRecord,
}


class Malformed(Exception):
    """A history line that is no record of the schema."""


class CommandHistory:
    """The records the history command prints, read once per workflow."""

    def __init__(
        self, command: Command, store: StoreHandle, scenario: Scenario, *, ledger: bool
    ) -> None:
        self.command = command
        self.store = store
        self.scenario = scenario
        self.ledger = ledger  # it prints the effect ledger it keeps (no ledger: checks unknown)
        self._read: dict[str, Records] = {}

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]:
        return self._of(workflow_id).checkpoints

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        return self._of(workflow_id).effects

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        return self._of(workflow_id).approvals

    def compacted_below(self, workflow_id: str) -> int:
        return self._of(workflow_id).compacted_below

    def _of(self, workflow_id: str) -> Records:
        if workflow_id not in self._read:
            self._read[workflow_id] = parse_history(
                self._run(workflow_id), self._said(), workflow_id
            )
        return self._read[workflow_id]

    def _said(self) -> str:
        assert self.command.history is not None
        return f"the history command of {self.command.name} ({' '.join(self.command.history)})"

    def _run(self, workflow_id: str) -> str:
        assert self.command.history is not None
        workdir = self.store.workdir / "engine"
        workdir.mkdir(parents=True, exist_ok=True)
        env = {
            "KILLPOINT_ACTION": "history",
            "KILLPOINT_WORKFLOW_ID": workflow_id,
            "KILLPOINT_SCENARIO": self.scenario.name,
            "KILLPOINT_TENANT": self.store.tenant,
            "KILLPOINT_WORKDIR": str(workdir),
            "KILLPOINT_DATABASE_URL": self.store.url,
        }
        try:
            done = subprocess.run(
                self.command.history,
                cwd=self.command.cwd,
                env={**os.environ, **env},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KillpointError(f"{self._said()}: {exc}") from None
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip()[-2_000:]
            raise KillpointError(f"{self._said()} exited with status {done.returncode}: {said}")
        return done.stdout.decode(errors="replace")


class Records:
    """One workflow's records, as parsed."""

    def __init__(self) -> None:
        self.checkpoints: list[CheckpointRecord] = []
        self.effects: list[EffectRecord] = []
        self.approvals: list[ApprovalRecord] = []
        self.compacted_below = 0


def parse_history(text: str, said: str, workflow_id: str = "") -> Records:
    """The records in `text`, one JSON object a line (blank lines skipped); a `KillpointError`
    naming the first line that is not a record of the schema."""
    history = Records()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            _add(history, json.loads(line), workflow_id)
        except (ValueError, Malformed) as exc:
            raise KillpointError(f"{said}, line {number}: {_problem(exc)}") from None
    return history


def _add(history: Records, doc: Any, workflow_id: str) -> None:
    if not isinstance(doc, dict):
        raise Malformed("not a JSON object")
    kind = doc.pop("record", None)
    if kind == "compacted":
        below = doc.get("below")
        if not isinstance(below, int) or isinstance(below, bool) or set(doc) != {"below"}:
            raise Malformed('a compacted record is {"record": "compacted", "below": N}')
        history.compacted_below = max(history.compacted_below, below)
        return
    if kind not in _KINDS:
        known = ", ".join([*_KINDS, "compacted"])
        raise Malformed(f'"record" must be one of {known}, got {kind!r}')
    if kind != "checkpoint":
        doc.setdefault("workflow_id", workflow_id)
    record = _KINDS[kind].model_validate(doc, strict=False)
    if isinstance(record, CheckpointRecord):
        history.checkpoints.append(record)
    elif isinstance(record, EffectRecord):
        history.effects.append(record)
    elif isinstance(record, ApprovalRecord):
        history.approvals.append(record)


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'record'}: {e['msg']}" for e in exc.errors()
        )
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg}, column {exc.colno})"
    return str(exc)


def history_reader(command: Command, *, ledger: bool) -> ReaderFactory:
    def reader(store: StoreHandle, scenario: Scenario) -> CommandHistory:
        return CommandHistory(command, store, scenario, ledger=ledger)

    return reader
