"""Keep one run's records in another store: how a campaign keeps its operator queue.

A campaign empties its store before each run, so every run starts from a world no earlier run
touched. The runs that ended waiting for a person are copied first, row for row (the sealed
checkpoints as they are), to a store of their own in the campaign's folder, where `killpoint
queue --db` and `inspect` read them after the campaign. A run kept twice (the same run id run
again) replaces its earlier copy.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, select

from killpoint.reference import _schema as t
from killpoint.reference.store import Store

SERIAL = {t.effect_log.name: "id", t.controls.name: "id"}  # numbered by the target itself


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
