"""The operator queue: every run of one tenant that waits for a person, oldest first.

Seed 000: "a recovery failure should enter an operator queue with enough evidence to act". A
run is queued when it needs review, was quarantined, exhausted its budget, was dead-lettered,
or has waited for an approval longer than a threshold. Each entry says why, since when, which
effects are in doubt and how old the oldest is, and which controls may act now (the rules the
controls themselves refuse by: `control_rules`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict
from sqlalchemy import bindparam, or_, select

from killpoint.contract.adapters import Capabilities
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import EffectRecord, RunStatus
from killpoint.contract.workflow import Workflow
from killpoint.reference import _schema as t
from killpoint.reference.control_facts import facts_of
from killpoint.reference.control_rules import allowed
from killpoint.reference.rows import WorkflowRecord, workflow_record
from killpoint.reference.store import Store

Reason = Literal[
    "needs_review", "quarantined", "budget_exhausted", "dead_lettered", "waiting_approval"
]
REASONS: tuple[str, ...] = get_args(Reason)
APPROVAL_AFTER_S = 3600.0  # an approval unanswered this long needs someone to chase it

w = t.workflows.c
QUEUED = (
    select(t.workflows)
    .where(w.tenant == bindparam("tenant"))
    .where(or_(*(w.status == bindparam(f"status_{i}") for i in range(len(REASONS)))))
    .order_by(w.updated_at, w.workflow_id)
)


class QueueEntry(BaseModel):
    """One run that waits for a person, with the evidence to act on it."""

    model_config = ConfigDict(frozen=True)

    workflow_id: str
    workflow_name: str
    tenant: str
    reason: Reason
    detail: str
    state: str
    sequence: int
    since: float  # when it stopped (or its approval was requested)
    age_s: float
    oldest_unresolved_age_s: float | None  # its oldest effect in doubt, from the ledger's log
    controls: tuple[str, ...]  # the controls allowed now
    in_doubt: tuple[str, ...] = ()  # the operation ids of its effects in doubt, from the ledger


def operator_queue(
    store: Store,
    *,
    tenant: str,
    now: float,
    key: bytes,
    reasons: Collection[str] | None = None,
    older_than_s: float = 0.0,
    approval_after_s: float = APPROVAL_AFTER_S,
    services: Mapping[str, Capabilities] | None = None,
    workflows: Mapping[str, Workflow] | None = None,
) -> list[QueueEntry]:
    """The runs of `tenant` that wait for a person at `now`, oldest first; `reasons` and
    `older_than_s` narrow it."""
    unknown = sorted(set(reasons or ()) - set(REASONS))
    if unknown:
        raise KillpointError(
            f"no queue reason {unknown[0]!r}: the reasons are {', '.join(REASONS)}"
        )
    params = {"tenant": tenant, **{f"status_{i}": r for i, r in enumerate(REASONS)}}
    entries = []
    for row in store.db.reading().execute(QUEUED, params).rows:
        entry = queue_entry(
            store,
            workflow_record(row),
            now=now,
            key=key,
            approval_after_s=approval_after_s,
            services=services,
            workflows=workflows,
        )
        if entry is None:
            continue
        if (reasons is None or entry.reason in reasons) and entry.age_s >= older_than_s:
            entries.append(entry)
    return sorted(entries, key=lambda e: (e.since, e.workflow_id))


def queue_entry(
    store: Store,
    record: WorkflowRecord,
    *,
    now: float,
    key: bytes,
    approval_after_s: float = APPROVAL_AFTER_S,
    services: Mapping[str, Capabilities] | None = None,
    workflows: Mapping[str, Workflow] | None = None,
) -> QueueEntry | None:
    """The queue's entry of one workflow (already read for its tenant) at `now`; None when it
    does not wait for a person (or waits for an approval for less than `approval_after_s`)."""
    if record.status.value not in REASONS:
        return None
    since = _since(store, record)
    if record.status is RunStatus.WAITING_APPROVAL and now - since < approval_after_s:
        return None
    facts, _ = facts_of(store, record, key=key, now=now, services=services, workflows=workflows)
    return QueueEntry(
        workflow_id=record.workflow_id,
        workflow_name=record.workflow_name,
        tenant=record.tenant,
        reason=record.status.value,
        detail=record.status_reason,
        state=record.state,
        sequence=record.sequence,
        since=since,
        age_s=max(0.0, now - since),
        oldest_unresolved_age_s=_oldest_doubt(store, record, facts.in_doubt, now),
        controls=allowed(facts),
        in_doubt=tuple(e.operation_id for e in facts.in_doubt),
    )


def _since(store: Store, record: WorkflowRecord) -> float:
    if record.status is RunStatus.WAITING_APPROVAL:
        asked = [a.requested_at for a in store.approvals(record.workflow_id)]
        if asked:
            return min(asked)
    return record.updated_at


def _oldest_doubt(
    store: Store, record: WorkflowRecord, doubts: Collection[EffectRecord], now: float
) -> float | None:
    ops = {e.operation_id for e in doubts}
    if not ops:
        return None
    first = [r.at for r in store.effect_log(record.workflow_id) if r.operation_id in ops]
    return max(0.0, now - min(first)) if first else None
