"""The operator view of one workflow: what an on-call engineer needs to decide what to do.

Seed 000 asks for more than a raw JSON viewer: the last committed state, unresolved effects with
their receipts, approval status, artifact hashes, the current owner, the compatible next actions
and a reason for every blocked transition. The view is built from store rows and from the latest
checkpoint *read through the integrity check*: a tampered or wrong-tenant checkpoint is shown as
rejected, and then none of its fields is shown as if it were true.

Only the sealed body is verified. The workflow row (status, position, budget, lease), the
checkpoint row's own columns and the ledger and approval rows are the store's unsealed words:
the view keeps them apart from the sealed facts (`CheckpointView.row` against `.sealed`) and
names each place they contradict the seal, or a checkpoint is missing, as an `Anomaly` (the
model: `operator_model`). It lists the operator controls allowed now, and why each other one is
refused, by the rules the controls refuse by (`control_rules`). The view is built for one
tenant: another tenant's workflow is refused before anything of it is read.
"""

from __future__ import annotations

from collections.abc import Mapping

from killpoint.contract.adapters import Capabilities
from killpoint.contract.records import ApprovalRecord, EffectRecord, EffectStatus, RunStatus
from killpoint.contract.workflow import Workflow
from killpoint.reference.checkpoint import (
    SCHEMA_VERSION,
    Budget,
    Checkpoint,
    StoredCheckpoint,
    open_checkpoint,
    parse_sealed,
)
from killpoint.reference.control_facts import facts_of
from killpoint.reference.control_rules import allowed, refusals
from killpoint.reference.errors import IntegrityError
from killpoint.reference.operator_model import (
    Action,
    Anomaly,
    ApprovalView,
    ArtifactView,
    CheckpointRow,
    CheckpointView,
    EffectView,
    LeaseView,
    OperatorView,
    SealedCheckpoint,
    TransitionView,
)
from killpoint.reference.rows import WorkflowRecord
from killpoint.reference.store import Store


def build_view(
    store: Store,
    workflow_id: str,
    *,
    key: bytes,
    now: float,
    tenant: str,
    workflows: Mapping[str, Workflow] | None = None,
    services: Mapping[str, Capabilities] | None = None,
) -> OperatorView:
    """Everything `killpoint inspect` shows, judged at time `now`, for an operator of `tenant`.

    Another tenant's workflow is `WrongTenantError`, before any of its rows is read.
    `workflows` and `services` are optional knowledge (the definition and the services'
    recovery flags) that make the view more precise.
    """
    record = store.workflow(workflow_id, tenant=tenant)
    checkpoint, cp_view = _checkpoint(store, workflow_id, key, tenant)
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
    wf = None if checkpoint is None else (workflows or {}).get(checkpoint.workflow_name)
    transitions = _transitions(checkpoint, wf, blocked)
    facts, _ = facts_of(store, record, key=key, now=now, services=services, workflows=workflows)
    return OperatorView(
        workflow_id=workflow_id,
        workflow_name=record.workflow_name,
        tenant=record.tenant,
        database=store.url_for_humans,
        at=now,
        anomalies=_anomalies(record, cp_view, checkpoint),
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
        controls=allowed(facts),
        refused_controls=refusals(facts),
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
        return None, CheckpointView(trusted=False, rejected_reason=str(exc), row=None)
    if stored is None:
        return None, None
    row = CheckpointRow(
        sequence=stored.sequence,
        state=stored.state,
        schema_version=stored.schema_version,
        created_at=stored.created_at,
    )
    try:
        cp = open_checkpoint(stored, key, tenant)
    except IntegrityError as exc:
        return None, CheckpointView(trusted=False, rejected_reason=str(exc), row=row)
    version = _sealed_version(stored)
    sealed = SealedCheckpoint(
        sequence=cp.sequence,
        state=cp.state,
        status=cp.status,
        schema_version=version,
        migrated=version != SCHEMA_VERSION,
        created_at=cp.created_at,
        lineage=cp.lineage,
        versions=cp.versions,
        budget=cp.budget,
        pending=cp.pending,
        next_actions=cp.next_actions,
    )
    return cp, CheckpointView(trusted=True, row=row, sealed=sealed)


def _sealed_version(stored: StoredCheckpoint) -> int:
    """The schema version the body was sealed with (the column beside it is not sealed)."""
    version = parse_sealed(stored.body).get("schema_version")
    return version if isinstance(version, int) else SCHEMA_VERSION


def _anomalies(
    record: WorkflowRecord, cp: CheckpointView | None, opened: Checkpoint | None
) -> tuple[Anomaly, ...]:
    """Where the unsealed rows contradict the sealed checkpoint, or lack one. A rejected
    checkpoint is not compared: nothing of it is sealed fact (its rejection is a block)."""
    if cp is None:
        if record.status.terminal:
            detail = (
                f"the workflow row says {record.status.value}, but no checkpoint proves it: "
                "its checkpoint rows were deleted"
            )
        else:
            detail = "no checkpoint row: nothing to resume from (deleted, or never written)"
        return (Anomaly(kind="checkpoint_missing", detail=detail),)
    if cp.sealed is None or cp.row is None or opened is None:
        return ()
    sealed = cp.sealed
    pairs: list[tuple[str, str | int, str | int]] = [
        ("checkpoints.schema_version", cp.row.schema_version, sealed.schema_version),
        ("checkpoints.state", cp.row.state, sealed.state),
        ("workflows.workflow_name", record.workflow_name, opened.workflow_name),
        ("workflows.state", record.state, sealed.state),
        ("workflows.sequence", record.sequence, sealed.sequence),
    ]
    if record.status is not RunStatus.QUARANTINED:  # quarantine moves the row alone, by design
        pairs.append(("workflows.status", record.status.value, sealed.status.value))
    return tuple(
        Anomaly(
            kind="unsealed_disagrees",
            detail=f"{column} says {unsealed!r}; sealed checkpoint #{sealed.sequence} says "
            f"{value!r}",
            column=column,
            unsealed=unsealed,
            sealed=value,
        )
        for column, unsealed, value in pairs
        if unsealed != value
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
        which = "the latest checkpoint" if cp.row is None else f"checkpoint #{cp.row.sequence}"
        why.append(f"quarantined: {which} rejected: {cp.rejected_reason}")
    if status is RunStatus.QUARANTINED and (cp is None or cp.trusted):
        why.append(f"quarantined: {reason}")
    elif status is RunStatus.WAITING_APPROVAL:
        pending = [a for a in approvals if a.status == "requested"]
        gates = ", ".join(repr(a.gate) for a in pending) or "(none requested)"
        why.append(f"waiting approval at gate {gates}")
    elif status is RunStatus.NEEDS_REVIEW:
        why.append(f"needs review: {reason}")
    elif status is RunStatus.DEAD_LETTERED:
        why.append(reason)
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
