"""The operator view of one workflow: what an on-call engineer needs to decide what to do.

Seed 000 asks for more than a raw JSON viewer: the last committed state, unresolved effects with
their receipts, approval status, artifact hashes, the current owner, the compatible next actions
and a reason for every blocked transition. The view is built from store rows and from the latest
checkpoint *read through the integrity check*: a tampered or wrong-tenant checkpoint is shown as
rejected, and then none of its fields is shown as if it were true.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from killpoint.harness.contract.adapters import Capabilities
from killpoint.harness.contract.records import (
    ApprovalRecord,
    EffectRecord,
    EffectStatus,
    Receipt,
    RunStatus,
    Versions,
)
from killpoint.harness.contract.workflow import Workflow
from killpoint.harness.engine.envelope import open_checkpoint
from killpoint.harness.engine.errors import IntegrityError
from killpoint.harness.engine.model import (
    Budget,
    Checkpoint,
    Lineage,
    PendingWork,
    WorkflowRecord,
)
from killpoint.harness.engine.store import Store

Action = Literal["none", "send", "reconcile", "retry", "escalate", "verify"]


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


class CheckpointView(_View):
    sequence: int
    state: str
    schema_version: int
    created_at: float
    trusted: bool
    rejected_reason: str | None = None
    lineage: Lineage | None = None
    versions: Versions | None = None
    budget: Budget | None = None
    pending: tuple[PendingWork, ...] = ()
    next_actions: tuple[str, ...] = ()


class TransitionView(_View):
    step: str
    kind: str | None = None
    source: str | None = None
    target: str | None = None
    allowed: bool
    blocked_by: tuple[str, ...] = ()


class OperatorView(_View):
    workflow_id: str
    workflow_name: str
    tenant: str
    database: str
    at: float
    status: RunStatus
    status_reason: str
    state: str
    sequence: int
    checkpoint: CheckpointView | None
    budget: Budget
    lease: LeaseView
    effects: tuple[EffectView, ...]
    approvals: tuple[ApprovalView, ...]
    artifacts: tuple[ArtifactView, ...]
    next_transitions: tuple[TransitionView, ...]
    blocked: tuple[str, ...]

    @property
    def unresolved(self) -> tuple[EffectView, ...]:
        return tuple(e for e in self.effects if e.unresolved)


def build_view(
    store: Store,
    workflow_id: str,
    *,
    key: bytes,
    now: float,
    tenant: str | None = None,
    workflows: Mapping[str, Workflow] | None = None,
    services: Mapping[str, Capabilities] | None = None,
) -> OperatorView:
    """Everything `killpoint inspect` shows, judged at time `now`.

    `tenant` defaults to the workflow's own; `workflows` and `services` are optional knowledge
    (the definition and the services' recovery flags) that make the view more precise.
    """
    record = store.workflow(workflow_id)
    expected_tenant = tenant or record.tenant
    checkpoint, cp_view = _checkpoint(store, workflow_id, key, expected_tenant)
    effects = tuple(_effect(e, (services or {}).get(e.service)) for e in store.effects(workflow_id))
    approvals = tuple(_approval(a, now) for a in store.approvals(workflow_id))
    artifacts = tuple(
        ArtifactView(produced_by=a.produced_by, uri=a.uri, sha256=a.sha256, media_type=a.media_type)
        for a in (checkpoint.artifacts if checkpoint else ())
    )
    lease, budget = _lease(record, now), _budget(record, now)
    blocked = _blocked(
        record.status, record.status_reason, cp_view, effects, approvals, lease, budget
    )
    wf = (workflows or {}).get(record.workflow_name)
    transitions = _transitions(checkpoint, wf, blocked)
    return OperatorView(
        workflow_id=workflow_id,
        workflow_name=record.workflow_name,
        tenant=record.tenant,
        database=store.url_for_humans,
        at=now,
        status=record.status,
        status_reason=record.status_reason,
        state=record.state,
        sequence=record.sequence,
        checkpoint=cp_view,
        budget=budget,
        lease=lease,
        effects=effects,
        approvals=approvals,
        artifacts=artifacts,
        next_transitions=transitions,
        blocked=blocked,
    )


def _approval(a: ApprovalRecord, now: float) -> ApprovalView:
    return ApprovalView(
        gate=a.gate,
        status=a.status,
        scope=a.scope,
        policy_version=a.policy_version,
        requested_at=a.requested_at,
        actor=a.actor,
        expires_at=a.expires_at,
        expired=None if a.expires_at is None else a.expires_at <= now,
    )


def _lease(record: WorkflowRecord, now: float) -> LeaseView:
    expires = record.lease_expires_at
    return LeaseView(
        owner=record.lease_owner,
        expires_at=expires,
        fencing_token=record.fencing_token,
        live=record.lease_owner is not None and expires is not None and expires > now,
    )


def _budget(record: WorkflowRecord, now: float) -> Budget:
    """The durable budget, as the store holds it, with the time left at `now`."""
    return Budget(
        attempts_left=record.attempts_left,
        steps_left=record.steps_left,
        cost_left=record.cost_left,
        time_left_ms=round((record.deadline - now) * 1000),
    )


def _checkpoint(
    store: Store, workflow_id: str, key: bytes, tenant: str
) -> tuple[Checkpoint | None, CheckpointView | None]:
    try:
        stored = store.latest_checkpoint(workflow_id)
    except IntegrityError as exc:  # the row itself is unreadable: rejected, nothing of it shown
        wf = store.workflow(workflow_id)
        return None, CheckpointView(
            sequence=wf.sequence,
            state=wf.state,
            schema_version=0,
            created_at=wf.updated_at,
            trusted=False,
            rejected_reason=str(exc),
        )
    if stored is None:
        return None, None
    try:
        cp = open_checkpoint(stored, key, tenant)
    except IntegrityError as exc:
        return None, CheckpointView(
            sequence=stored.sequence,
            state=stored.state,
            schema_version=stored.schema_version,
            created_at=stored.created_at,
            trusted=False,
            rejected_reason=str(exc),
        )
    return cp, CheckpointView(
        sequence=cp.sequence,
        state=cp.state,
        schema_version=stored.schema_version,
        created_at=cp.created_at,
        trusted=True,
        lineage=cp.lineage,
        versions=cp.versions,
        budget=cp.budget,
        pending=cp.pending,
        next_actions=cp.next_actions,
    )


def _effect(record: EffectRecord, caps: Capabilities | None) -> EffectView:
    action, detail = _action(record, caps)
    return EffectView(
        operation_id=record.operation_id,
        step=record.step,
        service=record.service,
        intent=record.intent,
        idempotency_key=record.idempotency_key,
        status=record.status,
        attempts=record.attempts,
        receipt=record.receipt,
        reason=record.reason,
        unresolved=record.status.unresolved,
        action=action,
        action_detail=detail,
    )


def _action(record: EffectRecord, caps: Capabilities | None) -> tuple[Action, str]:
    """The dispatcher's next move for this ledger row (see `EffectExecutor.execute`)."""
    s, key, service = record.status, record.idempotency_key, record.service
    if s.unresolved:
        if caps is None or caps.queryable:
            detail = (
                f"look up {service} by key {key}: present → commit its receipt; "
                "absent → retry with the same key"
            )
            if caps is None:
                detail += f"; escalate to review if {service} cannot be asked"
            return "reconcile", detail
        if caps.idempotent:
            return "retry", f"{service} cannot be asked but dedups: retry with the same key {key}"
        return "escalate", (
            f"needs review: {service} cannot be asked and a second attempt could duplicate it"
            + (" (irreversible)" if caps.irreversible else "")
        )
    if s is EffectStatus.PREPARED:
        return "send", f"intent recorded, nothing sent yet: send with key {key}"
    if s is EffectStatus.COMMITTED:
        return "verify", "receipt committed: read authoritative state to prove the postcondition"
    if s is EffectStatus.NEEDS_REVIEW:
        return "escalate", f"needs review: {record.reason}"
    return "none", ""


def _blocked(
    status: RunStatus,
    reason: str,
    cp: CheckpointView | None,
    effects: tuple[EffectView, ...],
    approvals: tuple[ApprovalView, ...],
    lease: LeaseView,
    budget: Budget,
) -> tuple[str, ...]:
    why: list[str] = []
    if cp is None:
        why.append("no checkpoint")
    elif not cp.trusted:
        why.append(f"quarantined: checkpoint #{cp.sequence} rejected: {cp.rejected_reason}")
    if status is RunStatus.QUARANTINED and (cp is None or cp.trusted):
        why.append(f"quarantined: {reason}")
    elif status is RunStatus.WAITING_APPROVAL:
        pending = [a for a in approvals if a.status == "requested"]
        gates = ", ".join(repr(a.gate) for a in pending) or "(none requested)"
        why.append(f"waiting approval at gate {gates}")
    elif status is RunStatus.NEEDS_REVIEW:
        why.append(f"needs review: {reason}")
    elif status is RunStatus.BUDGET_EXHAUSTED:
        why.append(f"budget exhausted: {reason}")
    elif status is RunStatus.COMPLETED or status is RunStatus.COMPENSATED:
        why.append(f"{status.value}: no next transition")
    elif status is RunStatus.FAILED:
        why.append(f"failed: {reason}")
    for a in approvals:
        if a.status == "granted" and a.expired:
            why.append(f"approval {a.gate!r} expired at {a.expires_at}: back to its gate")
    if status is RunStatus.RUNNING:
        exhausted = budget.exhausted()
        if exhausted is not None:
            why.append(f"budget exhausted: {exhausted} (durable, survives restarts)")
    for e in effects:
        if e.unresolved:
            why.append(
                f"effect {e.operation_id} is {e.status.value}: {e.action} before any next step"
            )
    if lease.live:
        why.append(
            f"lease held by {lease.owner} until {lease.expires_at} (token {lease.fencing_token})"
        )
    return tuple(why)


def _transitions(
    cp: Checkpoint | None, wf: Workflow | None, blocked: tuple[str, ...]
) -> tuple[TransitionView, ...]:
    if cp is None:
        return ()
    views = []
    for name in cp.next_actions:
        kind = source = target = None
        if wf is not None:
            transition = wf.transition_from(cp.state)
            if transition is not None and transition.step.name == name:
                kind = transition.step.kind.value
                source, target = transition.source, transition.target
        views.append(
            TransitionView(
                step=name,
                kind=kind,
                source=source or cp.state,
                target=target,
                allowed=not blocked,
                blocked_by=blocked,
            )
        )
    return tuple(views)
