"""Every statement of the store, built once with named parameters.

The store compiles each statement once per database (`_sql`), so a statement must be
the same object on every call: module-level here, or a `functools.cache`d builder for the few
whose shape varies (which columns a fenced write moves, how many statuses it expects).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import (
    Delete,
    Insert,
    Select,
    Table,
    Update,
    bindparam,
    delete,
    insert,
    select,
    update,
)

from killpoint.reference import _schema as t

w, c, e, g = t.workflows.c, t.checkpoints.c, t.effects.c, t.effect_log.c
a, p, o = t.artifacts.c, t.approvals.c, t.outputs.c


def _insert(table: Table) -> Insert:
    """An INSERT of every column but an autoincrement key: each a parameter of its name."""
    return insert(table).values(
        {col.name: bindparam(col.name) for col in table.c if col.autoincrement is not True}
    )


# -- workflows and leases -----------------------------------------------------------------------

INSERT_WORKFLOW = _insert(t.workflows)
WORKFLOW = select(t.workflows).where(w.workflow_id == bindparam("workflow_id"))
WORKFLOW_IDS = select(w.workflow_id)
POSITIONS = select(w.workflow_id, w.sequence).where(w.tenant == bindparam("tenant"))
LEASE_ROW = select(w.fencing_token, w.lease_owner, w.lease_expires_at, w.sequence).where(
    w.workflow_id == bindparam("workflow_id")
)
QUARANTINE = (
    update(t.workflows)
    .where(w.workflow_id == bindparam("workflow_id"))
    .values(
        status=bindparam("status"), status_reason=bindparam("reason"), updated_at=bindparam("now")
    )
)
ACQUIRE_LEASE = (
    update(t.workflows)
    .where(w.workflow_id == bindparam("workflow_id"))
    .where(
        (w.lease_owner.is_(None))
        | (w.lease_expires_at <= bindparam("now"))
        | (w.lease_owner == bindparam("owner"))
    )
    .values(
        lease_owner=bindparam("owner"),
        lease_expires_at=bindparam("expires_at"),
        fencing_token=w.fencing_token + 1,
        updated_at=bindparam("now"),
    )
)
COMPACTED_BELOW = select(w.compacted_below).where(w.workflow_id == bindparam("workflow_id"))
SET_COMPACTED_BELOW = (
    update(t.workflows)
    .where(w.workflow_id == bindparam("workflow_id"))
    .values(compacted_below=bindparam("below"))
)


@cache
def guarded_update(
    fenced: bool, expect_sequence: bool, keys: tuple[str, ...], spend_attempt: bool
) -> Update:
    """The UPDATE of the workflow row a write makes first: `fenced`, only under our token and
    unexpired lease; `expect_sequence`, only from the sequence we read.

    Each value is the parameter of its column's name; `spend_attempt` also takes one durable
    attempt."""
    stmt = update(t.workflows).where(w.workflow_id == bindparam("g_workflow_id"))
    if fenced:
        stmt = (
            stmt.where(w.fencing_token == bindparam("g_token"))
            .where(w.lease_owner == bindparam("g_owner"))
            .where(w.lease_expires_at > bindparam("g_now"))
        )
    if expect_sequence:
        stmt = stmt.where(w.sequence == bindparam("g_sequence"))
    values: dict[str, Any] = {k: bindparam(k) for k in keys}
    if spend_attempt:
        values["attempts_left"] = w.attempts_left - 1
    return stmt.values(values)


# -- checkpoints --------------------------------------------------------------------------------

INSERT_CHECKPOINT = _insert(t.checkpoints)
LATEST_CHECKPOINT = (
    select(t.checkpoints)
    .where(c.workflow_id == bindparam("workflow_id"))
    .order_by(c.sequence.desc())
    .limit(1)
)
CHECKPOINTS = (
    select(t.checkpoints).where(c.workflow_id == bindparam("workflow_id")).order_by(c.sequence)
)
_DOOMED = (
    (c.workflow_id == bindparam("workflow_id"))
    & (c.sequence < bindparam("latest"))
    & (c.created_at < bindparam("before"))
)
HIGHEST_DOOMED: Select[Any] = select(c.sequence).where(_DOOMED).order_by(c.sequence.desc()).limit(1)
DELETE_DOOMED: Delete = delete(t.checkpoints).where(_DOOMED)

INSERT_OUTPUT = _insert(t.outputs)
DELETE_CHECKPOINT_AT = (
    delete(t.checkpoints)
    .where(c.workflow_id == bindparam("workflow_id"))
    .where(c.sequence == bindparam("sequence"))
)
DELETE_OUTPUTS_AT = (
    delete(t.outputs)
    .where(o.workflow_id == bindparam("workflow_id"))
    .where(o.sequence == bindparam("sequence"))
)
OUTPUTS = (
    select(o.sequence, o.step, o.value, o.sha256)
    .where(o.workflow_id == bindparam("workflow_id"))
    .where(o.sequence > bindparam("after"))
    .where(o.sequence <= bindparam("upto"))
    .order_by(o.sequence, o.step)
)

# -- the effect ledger --------------------------------------------------------------------------

INSERT_EFFECT = _insert(t.effects)
INSERT_LOG = _insert(t.effect_log)
EFFECT = (
    select(t.effects)
    .where(e.workflow_id == bindparam("workflow_id"))
    .where(e.operation_id == bindparam("operation_id"))
)
EFFECTS = (
    select(t.effects)
    .where(e.workflow_id == bindparam("workflow_id"))
    .order_by(e.created_at, e.operation_id)
)
EFFECT_LOG = select(t.effect_log).where(g.workflow_id == bindparam("workflow_id")).order_by(g.id)


@cache
def effect_update(receipt: bool, attempt: bool, expected: int) -> Update:
    """The status move of a ledger row, guarded by the `expected` statuses `e_expect_<i>`; it
    returns the row as moved."""
    values: dict[str, Any] = {
        "status": bindparam("v_status"),
        "updated_at": bindparam("v_updated_at"),
        "reason": bindparam("v_reason"),
    }
    if receipt:
        values["receipt"] = bindparam("v_receipt")
    if attempt:
        values["attempts"] = e.attempts + 1
    return (
        update(t.effects)
        .where(e.workflow_id == bindparam("e_workflow_id"))
        .where(e.operation_id == bindparam("e_operation_id"))
        .where(e.status.in_([bindparam(f"e_expect_{i}") for i in range(expected)]))
        .values(values)
        .returning(*t.effects.c)
    )


# -- artifacts and approvals --------------------------------------------------------------------

INSERT_ARTIFACT = _insert(t.artifacts)
DELETE_ARTIFACT = (
    delete(t.artifacts)
    .where(a.workflow_id == bindparam("workflow_id"))
    .where(a.step == bindparam("step"))
)
ARTIFACT = (
    select(a.sha256, a.uri, a.media_type)
    .where(a.workflow_id == bindparam("workflow_id"))
    .where(a.step == bindparam("step"))
)
INSERT_APPROVAL = insert(t.approvals).values(
    {
        col: bindparam(col)
        for col in (
            "workflow_id",
            "gate",
            "status",
            "scope",
            "policy_version",
            "payload",
            "requested_at",
        )
    }
)
DELETE_APPROVAL = (
    delete(t.approvals)
    .where(p.workflow_id == bindparam("workflow_id"))
    .where(p.gate == bindparam("gate"))
)
GRANT_APPROVAL = (
    update(t.approvals)
    .where(p.workflow_id == bindparam("workflow_id"))
    .where(p.gate == bindparam("gate"))
    .where(p.status == "requested")
    .values(status="granted", actor=bindparam("actor"), expires_at=bindparam("expires_at"))
)
APPROVALS = select(t.approvals).where(p.workflow_id == bindparam("workflow_id")).order_by(p.gate)


# -- the shapes the reference engine runs, for `Store.warm` -------------------------------------

_POSITION = ("attempts_left", "cost_left", "sequence", "state", "status", "status_reason")


def everything() -> list[Any]:
    """Every statement above, and every shape of the builders that the engine's writes take."""
    commit = tuple(sorted((*_POSITION, "steps_left", "lease_expires_at", "updated_at")))
    guards = [
        guarded_update(True, True, commit, False),  # a checkpoint
        guarded_update(True, False, ("updated_at",), False),  # an intent, artifact, approval
        guarded_update(True, False, ("updated_at",), True),  # an effect started: attempt spent
        guarded_update(True, False, ("lease_expires_at", "updated_at"), False),  # a renewal
        guarded_update(True, False, ("lease_expires_at", "lease_owner", "updated_at"), False),
    ]
    moves = [effect_update(r, a, n) for r in (False, True) for a in (False, True) for n in (1, 2)]
    built = [v for v in globals().values() if isinstance(v, Select | Insert | Update | Delete)]
    return built + guards + moves
