"""The facts the control rules read, gathered from a store the one way every caller gathers them.

A control (before and again under its lease), `killpoint inspect` and the operator queue all
build `Facts` here, so the controls a view lists are the controls that would act.
"""

from __future__ import annotations

from collections.abc import Mapping

from killpoint.contract.adapters import Capabilities
from killpoint.contract.workflow import Workflow
from killpoint.reference.checkpoint import Checkpoint, open_checkpoint
from killpoint.reference.control_rules import Facts
from killpoint.reference.errors import IntegrityError
from killpoint.reference.rows import WorkflowRecord
from killpoint.reference.store import Store


def facts_of(
    store: Store,
    record: WorkflowRecord,
    *,
    key: bytes,
    now: float,
    services: Mapping[str, Capabilities] | None = None,
    workflows: Mapping[str, Workflow] | None = None,
    mine: str | None = None,
) -> tuple[Facts, Checkpoint | None]:
    """The facts of one workflow (already read for its tenant) at `now`, and its trusted latest
    checkpoint (None when there is none to trust). A live lease of `mine` is not a block."""
    checkpoint, rejected = latest_trusted(store, record, key)
    live = (
        record.lease_owner is not None
        and record.lease_expires_at is not None
        and record.lease_expires_at > now
        and record.lease_owner != mine
    )
    facts = Facts(
        status=record.status,
        rejected=rejected,
        effects=tuple(store.effects(record.workflow_id)),
        attempts_left=record.attempts_left,
        lease_owner=record.lease_owner if live else None,
        services=services,
        workflow=(workflows or {}).get(record.workflow_name),
    )
    return facts, checkpoint


def latest_trusted(
    store: Store, record: WorkflowRecord, key: bytes
) -> tuple[Checkpoint | None, str | None]:
    """The latest checkpoint read through the integrity check, or why it cannot be trusted (the
    ledger beside it included)."""
    try:
        stored = store.latest_checkpoint(record.workflow_id)
        if stored is None:
            return None, "no checkpoint"
        cp = open_checkpoint(stored, key, record.tenant)
    except IntegrityError as exc:
        return None, str(exc)
    if cp.workflow_name != record.workflow_name:
        return None, f"checkpoint names workflow {cp.workflow_name!r}"
    rolled = rolled_back(store, record.workflow_id)
    if rolled is not None:  # a worker quarantines it (`Engine.check_ledger`): so do the rules
        return None, rolled
    return cp, None


def rolled_back(store: Store, workflow_id: str) -> str | None:
    """Why the ledger cannot be trusted, if it cannot: each row is the fold of its append-only
    log, written in one transaction with it, so a row whose status is not its log's last was
    rolled back (or written around the log); trusting it could send an effect again."""
    last = {row.operation_id: row.status for row in store.effect_log(workflow_id)}
    for record in store.effects(workflow_id):
        logged = last.get(record.operation_id)
        if logged is not None and logged != record.status:
            return (
                f"ledger row {record.operation_id!r} says {record.status.value}, its log "
                f"{logged.value}: the ledger was rolled back"
            )
    return None
