"""The dead-letter path: a run handed to workers too often without ending goes to a person.

Seed 000: "queue redelivery handling" and a "dead-letter path"; restarts must not turn a bounded
agent into an endless loop. Each delivery that finds a run mid-flight (status running: the
worker before it died, lost its lease or was never done) is counted once its worker holds the
lease. Past `Settings.max_deliveries`, the run is committed
`dead_lettered` with its evidence (how many deliveries, where it stood, why it last stopped)
instead of being driven again; a dead-lettered run is terminal, so every later resume or
redelivery is refused as a stop for review. An operator's control clears the count: a person
looked at the run and handed it back.
"""

from __future__ import annotations

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.exc import IntegrityError as SqlIntegrityError

from killpoint.reference import _schema as t
from killpoint.reference._sql import Tx
from killpoint.reference.errors import ConflictError
from killpoint.reference.lease import Lease
from killpoint.reference.store import Store

d = t.deliveries.c
COUNT = select(d.count).where(d.workflow_id == bindparam("workflow_id"))
FIRST = insert(t.deliveries).values(
    workflow_id=bindparam("workflow_id"), count=bindparam("count"), at=bindparam("at")
)
BUMP = (
    update(t.deliveries)
    .where(d.workflow_id == bindparam("workflow_id"))
    .values(count=d.count + 1, at=bindparam("at"))
)
FORGET = delete(t.deliveries).where(d.workflow_id == bindparam("workflow_id"))
STATEMENTS = (COUNT, FIRST, BUMP, FORGET)  # what a warmed store compiles ahead (`Store.warm`)


def count_delivery(store: Store, lease: Lease, now: float) -> int:
    """One more delivery of a run mid-flight; how many so far. Not fenced: a delivery is one
    whoever holds the lease next, and the worker's next fenced write is what stops a stale one
    (an extra fenced write here would stop it earlier, and hide a broken fence from the oracle).
    An atomic increment, so two workers never count one delivery."""
    key = {"workflow_id": lease.workflow_id, "at": now}
    for _ in range(2):
        with store.db.transaction() as tx:
            if tx.write(BUMP, key) == 1:
                return int(tx.execute(COUNT, key).scalar())
        try:
            with store.db.transaction() as tx:
                tx.write(FIRST, {**key, "count": 1})
            return 1
        except SqlIntegrityError:  # another worker counted the first one meanwhile
            continue
    raise ConflictError(f"delivery count of {lease.workflow_id!r} could not be written")


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
