"""The history of one run: everything observed, in one serializable record.

Boundary hits (with the worker, the clock and the services' journal position at that moment),
each worker's end, the engine's durable records read through its `HistoryReader`, and each
service's ground truth. Checkers judge only this; a replay is correct when it reproduces it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from killpoint.harness.contract.records import BudgetLimits
from killpoint.harness.protocol import CheckpointView
from killpoint.harness.schedule import FaultSchedule


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class HitRecord(_Model):
    worker: int
    step: str | None
    boundary: str
    occurrence: int
    time: float
    journal_seq: int  # requests the services had seen when the hit happened

    def label(self) -> str:
        at = f"{self.step}:" if self.step else ""
        return f"{at}{self.boundary}" + (f"#{self.occurrence}" if self.occurrence > 1 else "")


class WorkerRecord(_Model):
    worker: int
    owner: str
    plan_version: str
    prompt_version: str
    end: Literal["stopped", "killed", "sigkill", "error"]
    status: str | None = None
    state: str | None = None
    sequence: int | None = None
    reason: str = ""
    hits: int = 0
    started_at: float
    ended_at: float
    journal_seq_end: int = 0
    wall_s: float = Field(default=0.0, exclude=True)  # noisy: not part of a replay's identity


class TamperRecord(_Model):
    after_worker: int
    kind: str
    sequence: int
    time: float
    journal_seq: int


class GrantRecord(_Model):
    """An approval the harness gave, playing the human: when, and until when."""

    gate: str
    time: float
    expires_at: float
    journal_seq: int


class ExpectedEffectRecord(_Model):
    service: str
    business_key: str
    operation: str | None = None
    irreversible: bool = False
    verifiable: bool = True
    gate: str | None = None


class History(_Model):
    scenario: str
    workflow_id: str
    schedule: FaultSchedule
    limits: BudgetLimits
    expected: list[ExpectedEffectRecord]
    hits: list[HitRecord]
    workers: list[WorkerRecord]
    tampered: list[TamperRecord] = []
    grants: list[GrantRecord] = []
    checkpoints: list[CheckpointView]
    compacted_below: int = 0
    effects: list[dict[str, Any]]
    approvals: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    applied: list[dict[str, Any]]
    expected_status: str = "completed"
    final_status: str
    final_state: str
    final_reason: str = ""

    @property
    def deaths(self) -> list[WorkerRecord]:
        return [w for w in self.workers if w.end in ("killed", "sigkill")]

    def identity(self) -> dict[str, Any]:
        """What must be equal between a run and its replay (wall-clock times excluded)."""
        return self.model_dump(mode="json")
