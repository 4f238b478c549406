"""The records every engine and the harness exchange: statuses, intents, receipts, ledger rows.

A scenario's steps build `EffectIntent`s and its adapters return `Receipt`s; an engine keeps an
`EffectRecord` per logical action and an `ApprovalRecord` per gate, and reports where a resume
left the run as an `Outcome`. None of them belongs to one engine: the reference engine stores
them, a team's own engine fills what it knows (the defaults say what may be missing), and the
oracle reads them. Frozen pydantic models: they cross processes and files, and are never
mutated in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

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
    DEAD_LETTERED = "dead_lettered"  # redelivered too often without ending: a person decides

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


class Versions(Frozen):
    """The executable contract that produced the state; compared on resume."""

    plan: str
    prompt: str
    model_contract: str
    tool_schema: str


# Seed 000's ways to deploy around in-flight runs: drain (old runs finish on old workers before
# the new version starts), migrate (paused runs' checkpoints move to the new version and resume
# on new workers), coexist (old runs keep old-version workers; new runs take the new version).
DeployStrategy = Literal["drain", "migrate", "coexist"]
DEPLOY_STRATEGIES: tuple[DeployStrategy, ...] = ("drain", "migrate", "coexist")


class DeployNotice(Frozen):
    """A deploy in progress, as each worker of either version is told of it: the versions it
    deploys and what happens to the runs it finds in flight."""

    strategy: DeployStrategy
    versions: Versions


class BudgetLimits(Frozen):
    """A scenario's limits, set once at start: what a run may spend across every restart."""

    attempts: int = Field(default=20, ge=1)
    steps: int = Field(default=200, ge=1)
    cost: int = Field(default=10_000, ge=1)
    time_s: float = Field(default=86_400.0, gt=0)


class ArtifactRef(Frozen):
    uri: str
    sha256: Sha256
    media_type: str
    produced_by: str  # the step whose output it is: provenance


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
    """One logical external action as its engine recorded it (a row of an effect ledger).

    `intent` is the operation the intent named; `attempts` counts the sends the engine spent on
    it. An engine without a fingerprint or a clock reading for the row leaves the defaults.
    """

    workflow_id: str
    operation_id: str
    step: str
    service: str
    intent: str
    args: dict[str, JsonValue] = Field(default_factory=dict)
    idempotency_key: str
    fingerprint: str = ""
    status: EffectStatus
    attempts: int = 0
    receipt: Receipt | None = None
    reason: str = ""
    updated_at: float = 0.0


class ApprovalRecord(Frozen):
    """A human gate as its engine recorded it: requested, then granted (until `expires_at`)."""

    workflow_id: str
    gate: str
    status: Literal["requested", "granted", "denied"]
    scope: str = ""
    policy_version: str = ""
    payload: dict[str, JsonValue] = Field(default_factory=dict)
    requested_at: float = 0.0
    actor: str | None = None
    expires_at: float | None = None


@dataclass(frozen=True)
class Outcome:
    """Where a resume left the workflow: the answer of `EngineUnderTest.resume`."""

    workflow_id: str
    status: RunStatus
    state: str
    sequence: int
    reason: str = ""
