"""The operator view's JSON model: what `killpoint inspect --json` prints, typed and frozen.

Each field says where it comes from. Only `CheckpointView.sealed` (and the artifacts and next
transitions taken from it) passed the integrity check; the rest is read from the store's
unsealed rows, and an `Anomaly` names each place where those rows contradict the seal.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from killpoint.contract.records import EffectStatus, Receipt, RunStatus, Versions
from killpoint.reference.checkpoint import Budget, Lineage, PendingWork

Action = Literal["none", "send", "reconcile", "retry", "escalate", "verify"]
AnomalyKind = Literal["unsealed_disagrees", "checkpoint_missing"]
UNSEALED = "from the workflow row: unsealed"


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


class EffectView(_View):
    operation_id: str
    step: str
    service: str
    intent: str
    idempotency_key: str
    status: EffectStatus
    attempts: int
    receipt: Receipt | None
    reason: str
    unresolved: bool
    action: Action
    action_detail: str


class ApprovalView(_View):
    gate: str
    status: str
    scope: str
    policy_version: str
    requested_at: float
    actor: str | None
    expires_at: float | None
    expired: bool | None  # None while nothing has been granted


class ArtifactView(_View):
    produced_by: str
    uri: str
    sha256: str
    media_type: str


class LeaseView(_View):
    owner: str | None
    expires_at: float | None
    fencing_token: int
    live: bool


class CheckpointRow(_View):
    """The latest checkpoint row's own columns: what the store says, not covered by the seal."""

    sequence: int
    state: str
    schema_version: int
    created_at: float


class SealedCheckpoint(_View):
    """What the checkpoint's sealed body says, read through the integrity check."""

    sequence: int
    state: str
    status: RunStatus
    schema_version: int = Field(description="as sealed; an older one was migrated to read it")
    migrated: bool
    created_at: float
    lineage: Lineage
    versions: Versions
    budget: Budget = Field(description="what was left when it was committed")
    pending: tuple[PendingWork, ...] = ()
    next_actions: tuple[str, ...] = ()


class CheckpointView(_View):
    """The latest checkpoint: `sealed` only when it passed the integrity check (`trusted`);
    `row` is None when the row could not even be read."""

    trusted: bool
    rejected_reason: str | None = None
    row: CheckpointRow | None
    sealed: SealedCheckpoint | None = None


class Anomaly(_View):
    """The store contradicts itself: an unsealed column disagrees with the sealed checkpoint,
    or a checkpoint that must exist is missing. Never raised by a correct engine's rows."""

    kind: AnomalyKind
    detail: str
    column: str | None = Field(default=None, description="table.column of the unsealed value")
    unsealed: str | int | None = None
    sealed: str | int | None = None


class TransitionView(_View):
    step: str
    kind: str | None = None
    source: str | None = None
    target: str | None = None
    allowed: bool
    blocked_by: tuple[str, ...] = ()


class OperatorView(_View):
    """One workflow of one tenant, as `killpoint inspect` shows it, judged at time `at`."""

    workflow_id: str
    workflow_name: str = Field(description=UNSEALED)
    tenant: str = Field(description="the tenant the view was built for, and the workflow's")
    database: str
    at: float
    anomalies: tuple[Anomaly, ...]
    status: RunStatus = Field(description=UNSEALED)
    status_reason: str = Field(description=UNSEALED)
    state: str = Field(description=UNSEALED)
    sequence: int = Field(description=UNSEALED)
    checkpoint: CheckpointView | None
    budget: Budget = Field(description=f"durable: {UNSEALED}")
    lease: LeaseView = Field(description=UNSEALED)
    effects: tuple[EffectView, ...] = Field(description="the ledger's rows, unsealed")
    approvals: tuple[ApprovalView, ...] = Field(description="the approval rows, unsealed")
    artifacts: tuple[ArtifactView, ...] = Field(description="from the sealed checkpoint")
    next_transitions: tuple[TransitionView, ...] = Field(description="from the sealed checkpoint")
    blocked: tuple[str, ...]
    controls: tuple[str, ...] = Field(default=(), description="the controls allowed now")
    refused_controls: dict[str, str] = Field(
        default_factory=dict, description="each other control, with why it is refused now"
    )

    @property
    def unresolved(self) -> tuple[EffectView, ...]:
        return tuple(e for e in self.effects if e.unresolved)
