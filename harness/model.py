"""The checkpoint envelope and the records that cross the store boundary.

Every field of the seed's checkpoint table has a home here. Models are frozen pydantic v2
models: they are what is stored, signed, read back and shown to operators, so they are
validated at every edge and never mutated in place.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

SCHEMA_VERSION: Literal[4] = 4

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunStatus(StrEnum):
    RUNNING = "running"
    WAITING_APPROVAL = "waiting_approval"
    COMPLETED = "completed"
    COMPENSATED = "compensated"
    NEEDS_REVIEW = "needs_review"
    BUDGET_EXHAUSTED = "budget_exhausted"
    QUARANTINED = "quarantined"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        return self is not RunStatus.RUNNING and self is not RunStatus.WAITING_APPROVAL


def is_terminal(status: str | None) -> bool:
    """Whether a status, as histories and outcomes spell it, ends the run."""
    known = {s.value for s in RunStatus}
    return status is not None and status in known and RunStatus(status).terminal


class EffectStatus(StrEnum):
    PREPARED = "prepared"
    STARTED = "started"
    UNKNOWN = "unknown"
    COMMITTED = "committed"
    VERIFIED = "verified"
    FAILED = "failed"
    COMPENSATED = "compensated"
    NEEDS_REVIEW = "needs_review"

    @property
    def unresolved(self) -> bool:
        return self in (EffectStatus.STARTED, EffectStatus.UNKNOWN)


class Lineage(Frozen):
    """Which run of the workflow wrote the checkpoint, and why it exists (start, branch …)."""

    run_id: str
    parent_run_id: str | None = None
    decision: Literal["start", "continue", "branch", "restart"] = "start"


class Versions(Frozen):
    """The executable contract that produced the state; compared on resume."""

    plan: str
    prompt: str
    model_contract: str
    tool_schema: str


class ArtifactRef(Frozen):
    uri: str
    sha256: Sha256
    media_type: str
    produced_by: str  # the step whose output it is: provenance


class EffectRef(Frozen):
    operation_id: str
    intent: str
    idempotency_key: str
    status: EffectStatus
    receipt_id: str | None = None


class ApprovalGrant(Frozen):
    gate: str
    actor: str
    scope: str
    policy_version: str
    expires_at: float


class Budget(Frozen):
    """What is left. Only ever decreases along a lineage, whatever crashes in between."""

    attempts_left: int
    steps_left: int
    cost_left: int
    time_left_ms: int

    def exhausted(self) -> str | None:
        for name in ("attempts_left", "steps_left", "cost_left", "time_left_ms"):
            if getattr(self, name) <= 0:
                return name.split("_left")[0]
        return None


class PendingWork(Frozen):
    kind: Literal["approval", "reconcile", "review", "handoff", "verify"]
    ref: str
    detail: str = ""


class OutputsRef(Frozen):
    """Where the run's step outputs are: rows of their own, pinned here by a hash chain.

    A checkpoint holds pointers and hashes, not the whole history, so it stays the same size
    however many steps ran; the chain over each output's sequence, step and hash, in commit
    order, lets a resume detect an altered, missing or extra output row."""

    since: int = Field(ge=0)  # output rows of checkpoints after this sequence are this run's
    count: int = Field(default=0, ge=0)
    digest: str = ""  # "" while there are none


class Checkpoint(Frozen):
    """A committed, versioned, integrity-protected boundary of one workflow run."""

    schema_version: Literal[4] = SCHEMA_VERSION
    workflow_id: str
    workflow_name: str
    tenant: str
    lineage: Lineage
    sequence: int = Field(ge=1)
    state: str
    status: RunStatus
    status_reason: str = ""
    input: dict[str, JsonValue]
    input_hash: str
    versions: Versions
    artifacts: tuple[ArtifactRef, ...] = ()
    effects: tuple[EffectRef, ...] = ()
    approvals: tuple[ApprovalGrant, ...] = ()
    budget: Budget
    pending: tuple[PendingWork, ...] = ()
    next_actions: tuple[str, ...] = ()
    outputs_ref: OutputsRef
    outputs: dict[str, JsonValue] = Field(default_factory=dict)  # inline: from schema v3 only
    created_at: float
    secret_refs: tuple[str, ...] = ()


class Receipt(Frozen):
    """What the downstream service said it did: its id for the effect and a hash of the result."""

    resource_id: str
    result_hash: str = ""
    detail: dict[str, JsonValue] = Field(default_factory=dict)


class EffectIntent(Frozen):
    """One logical external action, named the same way on every attempt."""

    operation: str
    service: str
    args: dict[str, JsonValue]
    high_impact: bool = False


class EffectRecord(Frozen):
    """A row of the effect ledger as the store returns it."""

    workflow_id: str
    operation_id: str
    step: str
    service: str
    intent: str
    args: dict[str, JsonValue]
    idempotency_key: str
    fingerprint: str
    status: EffectStatus
    attempts: int
    receipt: Receipt | None = None
    reason: str = ""
    updated_at: float


class ApprovalRecord(Frozen):
    workflow_id: str
    gate: str
    status: Literal["requested", "granted", "denied"]
    scope: str
    policy_version: str
    payload: dict[str, JsonValue]
    requested_at: float
    actor: str | None = None
    expires_at: float | None = None


class WorkflowRecord(Frozen):
    workflow_id: str
    workflow_name: str
    tenant: str
    status: RunStatus
    status_reason: str
    state: str
    sequence: int
    fencing_token: int
    lease_owner: str | None
    lease_expires_at: float | None
    attempts_left: int
    steps_left: int
    cost_left: int
    deadline: float
    created_at: float
    updated_at: float


class StoredCheckpoint(Frozen):
    """A checkpoint row exactly as stored: bytes and tag, not yet trusted."""

    workflow_id: str
    sequence: int
    run_id: str
    state: str
    schema_version: int
    tenant: str
    body: bytes
    tag: str
    fencing_token: int
    created_at: float


def as_json(value: Any) -> JsonValue:
    """Round-trip a value through pydantic's JSON mode so it is plain JSON data."""
    from pydantic import TypeAdapter

    return TypeAdapter(Any).dump_python(value, mode="json")  # type: ignore[no-any-return]
