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
    """Where a run stands, as an engine reports it (`Outcome.status`) and records it.

    `running` and `waiting_approval` are not terminal: a later worker resumes the run (the
    harness grants the approval first). The rest end it: `completed` (the workflow reached a
    terminal state of its happy path), `compensated` (it undid what it had done, as the
    workflow's `on_failure` edges lead), `needs_review` (an effect in doubt, or a fact recovery
    could not establish: a person decides), `budget_exhausted` (attempts, steps, cost or time
    spent), `quarantined` (its checkpoint cannot be trusted or migrated), `failed` (a definite
    rejection with nowhere to go), `dead_lettered` (its start message was redelivered too often
    without the run ending). Stopping for a person is correct recovery, never a violation by
    itself; ending `completed` while an effect is in doubt is the violation.
    """

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
    """Where one logical effect stands in an engine's ledger, in write-ahead order.

    `prepared` (the intent and its key are recorded), `started` (an attempt is spent, the call
    is about to go), `unknown` (the call may or may not have happened: a timeout, a lost
    response), `committed` (the service's receipt is recorded), `verified` (a read proved its
    postcondition), `failed` (the service definitely refused it), `compensated` (a later
    effect undid it), `needs_review` (only a person can settle it). `started` and `unknown`
    are unresolved (`unresolved`): recovery must ask the service or escalate, never assume.
    """

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
    """What the downstream service said it did: its id for the effect and a hash of the result.

    Attributes:
        resource_id: the service's id of what the effect made (a charge id, a publication ref);
            a later step reads it from the ledger (a refund names its charge).
        result_hash: a hash of the service's answer, where the adapter computes one.
        detail: the rest the adapter keeps of the answer (a publisher receipt says whether
            the publication was `visible` yet).
    """

    resource_id: str
    result_hash: str = ""
    detail: dict[str, JsonValue] = Field(default_factory=dict)


class EffectIntent(Frozen):
    """One logical external action, named the same way on every attempt.

    A step's `intents` function builds it from the step context; the engine hands it to the
    service's adapter (`EffectAdapter.send`) with an idempotency key of its own making.

    Attributes:
        operation: the step's name for the action (`charge`), not the service's
            (`create_charge`).
        service: the adapter that carries it (a key of `Scenario.make_adapters`).
        args: the business arguments: the same on every attempt, so a retry is the same request.
        high_impact: money moves or something that cannot be taken back happens: a marker
            for the engine and for a reader (no checker judges by it).
    """

    operation: str
    service: str
    args: dict[str, JsonValue]
    high_impact: bool = False


class EffectRecord(Frozen):
    """One logical external action as its engine recorded it (a row of an effect ledger).

    One record per logical action, not per attempt. An engine hands the records of a run to
    each step (`StepContext.effects`: a step reads an earlier effect's receipt from them) and
    to the oracle (`HistoryReader.effects`). An engine without a fingerprint or a clock reading
    for the row leaves the defaults.

    Attributes:
        operation_id: the action's identity in the ledger: one per (workflow, step, operation).
        step: the step whose intent it is.
        service: the service the intent went to.
        intent: the operation the intent named (`EffectIntent.operation`).
        args: the intent's arguments.
        idempotency_key: the key sent with every attempt: the same on every retry and resume
            (letters and digits: it travels as a URL path segment and a header).
        fingerprint: a hash of the request, where the engine keeps one.
        status: where it stands (`EffectStatus`); a step only trusts a `committed` or
            `verified` one.
        attempts: the sends the engine spent on it (spent before each send).
        receipt: what the service said it did, once known.
        reason: why it ended as it did (a rejection, a review).
        updated_at: the world clock's reading when the row last changed.
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
    """Where a resume left the workflow: the answer of `EngineUnderTest.resume`.

    Attributes:
        workflow_id: the run's workflow id.
        status: where the run stands (`RunStatus`): terminal, or waiting for an approval.
        state: the workflow state it is in.
        sequence: the number of its last committed checkpoint.
        reason: why it stopped, for a status a person reads (`needs_review`, `quarantined` …).
    """

    workflow_id: str
    status: RunStatus
    state: str
    sequence: int
    reason: str = ""
