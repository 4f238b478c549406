"""Mutants that test only graceful shutdown: right under every death that lets a worker clean
up or keep its memory, wrong under the first `SIGKILL`.

Seed 000, among its common mistakes: "Testing only graceful shutdown. Real failures occur
between instructions. Kill the process without cleanup and verify that the next worker can
reconcile the last uncertain effect." Seed 001's matrix: "Kill the worker before and after each
external call." Each engine here is the reference with one seam overridden, written from that
text. An in-process death is an exception: `finally` blocks run and the process's memory
survives it, so both are right there. A worker killed by its operating system runs no
`finally` and takes its memory with it.
"""

from __future__ import annotations

from collections.abc import Callable

from killpoint.contract.records import EffectIntent, EffectRecord, EffectStatus, Outcome
from killpoint.reference.dispatcher import Engine
from killpoint.reference.ledger import EffectExecutor

# What this process has sent: (store, idempotency key) of each effect a worker of this process
# began to send. It lives as long as the process, as a module-level cache does.
SENT: set[tuple[str, str]] = set()


class SentTableTrusted(EffectExecutor):
    """Remembers in a process-global table each effect it began to send, and on recovery trusts
    the table over the service: a `started` effect the table never saw "was never sent" (the
    worker died between committing `started` and calling out, or the table would say so) and
    is sent again without asking; only one the table saw is reconciled with the service."""

    def attempt(
        self, intent: EffectIntent, record: EffectRecord, guard: Callable[[], None] | None
    ) -> EffectRecord:
        SENT.add(_entry(self, record))
        return super().attempt(intent, record, guard)

    def reconcile(self, intent: EffectIntent, record: EffectRecord) -> EffectRecord:
        if _entry(self, record) in SENT:
            return super().reconcile(intent, record)
        return self.mark(
            record,
            EffectStatus.PREPARED,
            expect=(EffectStatus.STARTED, EffectStatus.UNKNOWN),
            reason="not in this process's sent table: never sent; send it",
        )


class LeaseFreedOnTheWayOut(Engine):
    """Frees its lease in a `finally` on every way out of a resume, a failure or a death
    included, so no run waits for a lease to lapse; and so it takes a lease that is still
    named for a live worker's, leaves the run to it and reports it as the row shows it."""

    def resume(self, workflow_id: str) -> Outcome:
        row = self.store.workflow(workflow_id, tenant=self.settings.tenant)
        holder = row.lease_owner
        if holder is not None and holder != self.owner:
            reason = f"leased to {holder}, who frees it on the way out: left to it"
            return Outcome(workflow_id, row.status, row.state, row.sequence, reason)
        try:
            return super().resume(workflow_id)
        finally:
            _let_go(self, workflow_id)


def _entry(executor: EffectExecutor, record: EffectRecord) -> tuple[str, str]:
    return (str(executor.session.store.url), record.idempotency_key)


def _let_go(engine: Engine, workflow_id: str) -> None:
    """Free the worker's lease, lapsed or not (taking it back first lets go of a lapsed one
    too); a lease another worker has since taken is theirs to free."""
    now = engine.clock.now()
    try:
        if engine.store.workflow(workflow_id).lease_owner != engine.owner:
            return
        lease = engine.store.acquire_lease(
            workflow_id, engine.owner, engine.settings.lease_ttl, now
        )
        engine.store.release_lease(lease, now)
    except Exception:  # best effort: a store that refuses or is gone has nothing to free
        pass
