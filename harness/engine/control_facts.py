"""The facts the control rules read, gathered from a store the one way every caller gathers them.

A control (before and again under its lease), `killpoint inspect` and the operator queue all
build `Facts` here, so the controls a view lists are the controls that would act.
"""

from __future__ import annotations

from collections.abc import Mapping

from killpoint.harness.contract.adapters import Capabilities
from killpoint.harness.contract.workflow import Workflow
from killpoint.harness.engine.control_rules import Facts
from killpoint.harness.engine.envelope import open_checkpoint
from killpoint.harness.engine.errors import IntegrityError
from killpoint.harness.engine.model import Checkpoint, WorkflowRecord
from killpoint.harness.engine.store import Store


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
    """The latest checkpoint read through the integrity check, or why it cannot be trusted."""
    try:
        stored = store.latest_checkpoint(record.workflow_id)
        if stored is None:
            return None, "no checkpoint"
        cp = open_checkpoint(stored, key, record.tenant)
    except IntegrityError as exc:
        return None, str(exc)
    if cp.workflow_name != record.workflow_name:
        return None, f"checkpoint names workflow {cp.workflow_name!r}"
    return cp, None
