"""The dead-letter path: a run handed to workers too often without ending goes to a person.

Seed 000: "queue redelivery handling" and a "dead-letter path"; restarts must not turn a bounded
agent into an endless loop. Each delivery that finds a run mid-flight (status running: the
worker before it died, lost its lease or was never done) is counted under the lease, in the
fenced transaction of the count itself. Past `Settings.max_deliveries`, the run is committed
`dead_lettered` with its evidence (how many deliveries, where it stood, why it last stopped)
instead of being driven again; a dead-lettered run is terminal, so every later resume or
redelivery is refused as a stop for review. An operator's control clears the count: a person
looked at the run and handed it back.
"""

from __future__ import annotations

from sqlalchemy import bindparam, delete, insert, select, update

from killpoint.harness.engine import _schema as t
from killpoint.harness.engine._sql import Tx
from killpoint.harness.engine.rows import Lease
from killpoint.harness.engine.store import Store

d = t.deliveries.c
COUNT = select(d.count).where(d.workflow_id == bindparam("workflow_id"))
FIRST = insert(t.deliveries).values(
    workflow_id=bindparam("workflow_id"), count=bindparam("count"), at=bindparam("at")
)
AGAIN = (
    update(t.deliveries)
    .where(d.workflow_id == bindparam("workflow_id"))
    .values(count=bindparam("count"), at=bindparam("at"))
)
FORGET = delete(t.deliveries).where(d.workflow_id == bindparam("workflow_id"))


def count_delivery(store: Store, lease: Lease, now: float) -> int:
    """One more delivery of a run mid-flight, counted under the lease; how many so far."""
    with store.db.transaction() as tx:
        store.fence.guard(tx, lease, now)
        seen = tx.execute(COUNT, {"workflow_id": lease.workflow_id}).scalar()
        count = 1 if seen is None else int(seen) + 1
        row = {"workflow_id": lease.workflow_id, "count": count, "at": now}
        tx.write(FIRST if seen is None else AGAIN, row)
    return count


def deliveries(store: Store, workflow_id: str) -> int:
    """How many deliveries found the run mid-flight since it started (or an operator acted)."""
    seen = store.db.reading().execute(COUNT, {"workflow_id": workflow_id}).scalar()
    return 0 if seen is None else int(seen)


def forget_deliveries(tx: Tx, workflow_id: str) -> None:
    """Start the count over, in the caller's transaction (an operator's control)."""
    tx.write(FORGET, {"workflow_id": workflow_id})


def dead_letter_reason(count: int, limit: int, state: str, last: str) -> str:
    """The evidence a dead-lettered run carries into the queue."""
    why = f"; it last stopped with: {last}" if last else ""
    return (
        f"dead-lettered: delivered {count} times without ending (the limit is {limit}), "
        f"at state {state!r}{why}; a person must decide (reconcile, retry, branch or terminate)"
    )
