"""The reference engine's checkpoint envelope and the records of its own store.

Every field of the seed's checkpoint table has a home here. Models are frozen pydantic v2
models: they are what is stored, signed, read back and shown to operators, so they are
validated at every edge and never mutated in place.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, JsonValue

from killpoint.contract.records import ArtifactRef, EffectStatus, RunStatus, Versions

SCHEMA_VERSION: Literal[4] = 4
# Bounds of what the store can hold: sequences and budgets are INTEGER columns (32 bits on
# PostgreSQL); a sealed body beyond them is refused when read, not on the next write.
INT32 = 2**31 - 1
INT64 = 2**63 - 1


def _exact_int(value: object) -> object:
    if isinstance(value, bool | float):
        raise ValueError(f"a schema version is an integer, not {type(value).__name__}")
    return value


class Frozen(BaseModel):
    # No NaN or infinity: JSON has neither, and an approval that expires "at inf" never does.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Lineage(Frozen):
    """Which run of the workflow wrote the checkpoint, and why it exists (start, branch …)."""

    run_id: str
    parent_run_id: str | None = None
    # a deploy's decision too (`DeployStrategy`): which strategy took the run over the deploy
    decision: Literal["start", "continue", "branch", "restart", "drain", "migrate", "coexist"] = (
        "start"
    )


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

    attempts_left: int = Field(ge=0, le=INT32)  # an attempt is spent only while one is left
    steps_left: int = Field(ge=0, le=INT32)  # likewise a step
    cost_left: int = Field(ge=-INT32, le=INT32)  # a step may cost more than was left
    time_left_ms: int = Field(ge=-INT64, le=INT64)  # negative past the deadline

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

    since: int = Field(ge=0, le=INT32)  # output rows of checkpoints after this one are the run's
    count: int = Field(default=0, ge=0, le=INT32)
    digest: str = ""  # "" while there are none


class Checkpoint(Frozen):
    """A committed, versioned, integrity-protected boundary of one workflow run."""

    # pydantic matches a literal by equality, even strictly: 4.0 would pass for 4
    schema_version: Annotated[Literal[4], BeforeValidator(_exact_int)] = SCHEMA_VERSION
    workflow_id: str
    workflow_name: str
    tenant: str
    lineage: Lineage
    sequence: int = Field(ge=1, le=INT32)
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

    @classmethod
    def first(cls, cp: Checkpoint, deadline: float) -> WorkflowRecord:
        """The row of a workflow whose checkpoint 1 is `cp`: free, at its first state."""
        return cls(
            workflow_id=cp.workflow_id,
            workflow_name=cp.workflow_name,
            tenant=cp.tenant,
            status=cp.status,
            status_reason="",
            state=cp.state,
            sequence=cp.sequence,
            fencing_token=0,
            lease_owner=None,
            lease_expires_at=None,
            attempts_left=cp.budget.attempts_left,
            steps_left=cp.budget.steps_left,
            cost_left=cp.budget.cost_left,
            deadline=deadline,
            created_at=cp.created_at,
            updated_at=cp.created_at,
        )


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
