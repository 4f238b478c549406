"""The history of one run: everything observed, in one typed, serializable record.

Boundary hits (with the worker, the clock and the services' journal position at that moment),
each worker's end, the engine's durable records read through its `HistoryReader`, and each
service's ground truth: every request it saw (`RequestRecord`) and every effect it applied
(`AppliedEffect`), as its journal holds them. Checkers judge only this; a replay is correct
when it reproduces it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from killpoint.contract.records import (
    ApprovalRecord,
    BudgetLimits,
    EffectRecord,
    Versions,
)
from killpoint.fake_services.journal import AppliedEffect, RequestRecord
from killpoint.harness.canaries import CanaryScan
from killpoint.harness.protocol import AuditedControl, CheckpointRecord, QueuedRun
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
    versions: Versions | None = None  # all of what it ran (the harness's deploy routing)
    end: Literal["stopped", "killed", "sigkill", "error", "hung"]
    status: str | None = None
    state: str | None = None
    sequence: int | None = None
    reason: str = ""
    hits: int = 0
    started_at: float
    ended_at: float
    journal_seq_end: int = 0
    wall_s: float = Field(default=0.0, exclude=True)  # noisy: not part of a replay's identity


class FailureRecord(_Model):
    """An exception the engine under test raised that is none of killpoint's own types (a parse
    error from a corrupt artifact, say): where it came from — a worker, the engine's history
    reader or its tamper hook — and its traceback. The harness carries on; the oracle calls it
    the engine's failure."""

    where: str  # "worker 1", "history reader", "tamper hook"
    error: str  # "ValueError: …"
    traceback: str


class TamperRecord(_Model):
    """A tampering the schedule asked for after a worker; `applied` is False when the engine
    under test could not stage it (no tamper hook, or not that kind), so nothing was altered."""

    after_worker: int
    kind: str
    sequence: int | None
    time: float
    journal_seq: int
    applied: bool = True


class GrantRecord(_Model):
    """An approval the harness gave, playing the human: when, until when, and what it covered:
    the request body fields the gate's policy names (`GatePolicy.covers`), each with the value
    the approver saw in the run's input (None: the policy declares nothing)."""

    gate: str
    time: float
    expires_at: float
    journal_seq: int
    covered: dict[str, JsonValue] | None = None


class LieRecord(_Model):
    """A start message that lied (`harness.lies`): to which worker, as which tenant, what it
    said, and the values only it holds (`marks`: no request, durable input or approval after
    it may carry one); `journal_seq` the requests the services had seen before it came."""

    worker: int
    kind: str
    tenant: str
    content: dict[str, JsonValue]
    marks: list[str | int]
    journal_seq: int
    delivered: bool = True  # False: this engine cannot take it (one worker per process)


class ExpectedEffectRecord(_Model):
    """An effect the scenario expects, with its business key as the journal spells it."""

    service: str
    business_key: str
    operation: str | None = None
    irreversible: bool = False
    verifiable: bool = True
    gate: str | None = None


class NeighbourRecord(_Model):
    """Another run in the run's world (`FaultSchedule.neighbours`, `harness.run.neighbours`): who it
    was, what it was meant to do, and what it left, read when the run ended — its journal rows
    by its origin, and its checkpoints, ledger and approvals through the engine's reader for
    its tenant. The main run's own records stay where they are in `History`."""

    kind: str
    tenant: str
    workflow_id: str
    origin: str
    before_worker: int
    expected: list[ExpectedEffectRecord]
    expected_status: str
    final_status: str
    failures: list[FailureRecord] = []
    grants: list[GrantRecord] = []
    readable: bool = True
    ledger: bool = True
    checkpoints: list[CheckpointRecord] = []
    effects: list[EffectRecord] = []
    approvals: list[ApprovalRecord] = []
    requests: list[RequestRecord] = []
    applied: list[AppliedEffect] = []


class History(_Model):
    """Everything one run left behind, as the checkers judge it (and a replay must reproduce).

    Three kinds of evidence, kept apart: the services' ground truth (`requests`, `applied`:
    their own journals), the engine's durable records read through its `HistoryReader`
    (`checkpoints`, `effects`, `approvals`; `readable` and `ledger` say whether it has any),
    and what the harness itself did and saw (`schedule`, `hits` at the boundaries, `workers`
    and how each ended, `tampered`, `grants`, `controls`, `lies`). What the last worker
    returned (`claimed_*`) is its word, never evidence; `final_status` is the end the durable
    records show. The records are serialized with the run (`killpoint replay --history`)."""

    scenario: str
    workflow_id: str
    schedule: FaultSchedule
    limits: BudgetLimits
    expected: list[ExpectedEffectRecord]
    hits: list[HitRecord]
    workers: list[WorkerRecord]
    tampered: list[TamperRecord] = []
    failures: list[FailureRecord] = []
    grants: list[GrantRecord] = []
    controls: list[str] = []  # what a named case's operator did, in order (`harness.operator`)
    checkpoints: list[CheckpointRecord]
    readable: bool = True  # the engine exposes its records (a history reader)
    ledger: bool = True  # …and among them an effect ledger (a framework keeps none)
    lacks: list[str] = []  # what the engine says it does not keep (`EngineSpec.lacks`)
    compacted_below: int = 0
    effects: list[EffectRecord]
    approvals: list[ApprovalRecord]
    requests: list[RequestRecord]
    applied: list[AppliedEffect]
    expected_status: str = "completed"
    # the run's end as the engine's durable records say (`harness.run.durable`); without a history
    # reader, what its last worker said (then `durable_status` is None: nothing durable seen)
    final_status: str
    final_state: str
    final_reason: str = ""
    lies: list[LieRecord] = []  # start messages that lied, as delivered (`harness.lies`)
    # who sent the run's own requests (`ORIGIN_HEADER`): `requests` and `applied` are its own
    # (and those nobody signed); the neighbours' are theirs, in `neighbours`
    origin: str | None = None
    neighbours: list[NeighbourRecord] = []
    # what the run's last worker returned: its word, kept apart and never evidence; None when
    # the last worker to end returned nothing (killed, failed, hung)
    claimed_status: str | None = None
    claimed_state: str = ""
    claimed_reason: str = ""
    keeps_queue: bool = False  # the engine's reader reads its durable operator queue
    queued: QueuedRun | None = None  # that queue's entry of this run, when it holds one
    # the engine's durable audit trail of operator controls; None: its reader reads none
    audit: list[AuditedControl] | None = None

    @property
    def durable_status(self) -> str | None:
        """The status the engine's durable records show; None without a history reader."""
        return self.final_status if self.readable else None

    # where the world's secrets were found after the run (`harness.run.canary_scan`); None: the
    # run was not scanned (`--no-canaries`)
    canaries: CanaryScan | None = None

    @property
    def deaths(self) -> list[WorkerRecord]:
        return [w for w in self.workers if w.end in ("killed", "sigkill")]

    @property
    def controls_applied(self) -> list[str]:
        """The controls the schedule's operator applied (`controls` keeps refusals too, as
        "NAME refused: why"; an applied one is "NAME: status", one a worker died in "NAME: in
        flight"), each as often as the harness's record or the engine's audit trail says: a
        worker may die after its control committed and before the harness heard of it."""
        said = (line.partition(": ")[0] for line in self.controls)
        applied = Counter(name for name in said if not name.endswith(" refused"))
        named = set(self.schedule.controls)
        applied |= Counter(a.control for a in self.audit or () if a.control in named)
        return list(applied.elements())

    @property
    def staged(self) -> list[TamperRecord]:
        """The tamperings that really altered something."""
        return [t for t in self.tampered if t.applied]

    def identity(self) -> dict[str, Any]:
        """What must be equal between a run and its replay (wall-clock times excluded)."""
        return self.model_dump(mode="json")
