"""Retention: what the store keeps, for how long, and where a run's records are kept after.

Checkpoints are kept for a recovery window and compacted after it (`compact`): a workflow's
latest checkpoint always stays, so it can still be resumed or inspected, and its effect rows and
their log are never dropped, since receipts are needed for business reconciliation long after
the detailed replay history is gone (seed 000, "set retention by recovery need").

A campaign empties its store before each run, so every run starts from a world no earlier run
touched. The runs that ended waiting for a person are copied first, row for row (the sealed
checkpoints as they are), to a store of their own in the campaign's folder, where `killpoint
queue --db` and `inspect` read them after the campaign. A run kept twice (the same run id run
again) replaces its earlier copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import delete, insert, select

from killpoint.reference import _schema as t
from killpoint.reference import _statements as q
from killpoint.reference._sql import Tx

if TYPE_CHECKING:  # a type only: the store runs `compact` in its own transaction
    from killpoint.reference.store import Store

SERIAL = {t.effect_log.name: "id", t.controls.name: "id"}  # numbered by the target itself


def compact(tx: Tx, now: float, keep_window_s: float, *, tenant: str) -> int:
    """Drop one tenant's checkpoint rows older than the window, always keeping each
    workflow's latest; another tenant's rows are not this caller's to drop. How many."""
    dropped = 0
    for row in tx.execute(q.POSITIONS, {"tenant": tenant}).rows:
        doomed = {
            "workflow_id": row["workflow_id"],
            "latest": row["sequence"],
            "before": now - keep_window_s,
        }
        highest = tx.execute(q.HIGHEST_DOOMED, doomed).scalar()
        if highest is None:
            continue
        dropped += tx.write(q.DELETE_DOOMED, doomed)
        below = {"workflow_id": row["workflow_id"], "below": highest + 1}
        tx.write(q.SET_COMPACTED_BELOW, below)
    return dropped


def keep_workflow(source: Store, target: Store, workflow_id: str) -> int:
    """Copy every row of `workflow_id` from `source` to `target` in one transaction; how many."""
    copied: dict[str, list[dict[str, object]]] = {}
    with source.engine.connect() as conn:
        for table in t.metadata.sorted_tables:
            rows = conn.execute(select(table).where(table.c.workflow_id == workflow_id))
            drop = SERIAL.get(table.name)
            copied[table.name] = [
                {k: v for k, v in row._mapping.items() if k != drop} for row in rows
            ]
    with target.engine.begin() as conn:
        for table in reversed(t.metadata.sorted_tables):
            conn.execute(delete(table).where(table.c.workflow_id == workflow_id))
        for table in t.metadata.sorted_tables:
            if copied[table.name]:
                conn.execute(insert(table), copied[table.name])
    return sum(len(rows) for rows in copied.values())
