"""Mutants of the effect ledger: an `EffectExecutor` that breaks the write-ahead protocol.

Each is the `executor` of the mutant's steps; the rest of the engine is the reference's.
"""

from __future__ import annotations

from collections.abc import Callable

from killpoint.contract import boundaries as b
from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.errors import EffectRejected, OutcomeUnknown
from killpoint.contract.records import EffectIntent, EffectRecord, EffectStatus, Receipt
from killpoint.reference.idempotency import operation_id
from killpoint.reference.ledger import EffectExecutor, Rejected, Session
from killpoint.scenarios.mutants.wrapped import Wrapped

S = EffectStatus
Guard = Callable[[], None] | None


def written_after(
    ex: EffectExecutor,
    intent: EffectIntent,
    status: EffectStatus,
    receipt: Receipt | None = None,
    reason: str = "",
) -> EffectRecord:
    """Write an effect's row *after* its call: insert it, or move the row a past call left."""
    s = ex.session
    op = operation_id(ex.step, intent)
    existing = next((e for e in s.store.effects(s.workflow_id) if e.operation_id == op), None)
    if existing is not None:
        return ex.mark(existing, status, expect=(existing.status,), receipt=receipt, reason=reason)
    done = {"status": status, "attempts": 1, "receipt": receipt, "reason": reason}
    return s.store.prepare_effect(
        s.lease, s.clock.now(), ex.prepared(intent).model_copy(update=done)
    )


class ConversationOnly(EffectExecutor):
    """000: saving only the conversation — no effect ledger.

    The service is called, then its answer written down like a line of a transcript: nothing
    is written ahead and nothing written before is consulted."""

    def execute(self, intent: EffectIntent, guard: Guard = None) -> EffectRecord:
        if guard is not None:
            guard()
        try:
            receipt = self.adapter.send(intent, self.key(intent))
        except EffectRejected as exc:
            raise Rejected(str(exc)) from exc
        self.session.hook(b.RESPONSE_READ, self.step)
        return written_after(self, intent, S.COMMITTED, receipt)


class _PerWorkerKeys(Wrapped):
    """An adapter seen through keys that name the worker making the attempt."""

    def __init__(self, adapter: EffectAdapter, owner: str) -> None:
        super().__init__(adapter)
        self.owner = owner

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        return self.adapter.send(intent, f"{key}-{self.owner}")

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        return self.adapter.lookup(intent, f"{key}-{self.owner}")


class FreshKeyOnResume(EffectExecutor):
    """000: generating a fresh idempotency key on resume.

    Each worker sends and looks up under a key of its own, not the operation's stored one."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        super().__init__(session, _PerWorkerKeys(adapter, session.lease.owner), step)


class TimeoutIsFailure(EffectExecutor):
    """000: marking a timeout as a failure (and retrying it)."""

    def on_unknown(self, record: EffectRecord, why: str) -> EffectRecord:
        """A timeout is taken for a clean failure: back to `prepared`, and send it again."""
        return self.mark(record, S.PREPARED, expect=(S.STARTED,), reason=f"failed: {why}")


class RecordAfterCall(EffectExecutor):
    """001: updating state after a call without a write-ahead record."""

    def write_ahead(self, intent: EffectIntent) -> EffectRecord:
        """No intent is committed ahead: until the call returns, the row is in memory only."""
        s = self.session
        op = operation_id(self.step, intent)
        existing = next((e for e in s.store.effects(s.workflow_id) if e.operation_id == op), None)
        return existing if existing is not None else self.prepared(intent)

    def attempt(self, intent: EffectIntent, record: EffectRecord, guard: Guard) -> EffectRecord:
        """The call is made first and its row written after."""
        if guard is not None:
            guard()
        try:
            receipt = self.adapter.send(intent, record.idempotency_key)
        except OutcomeUnknown as exc:
            return written_after(self, intent, S.UNKNOWN, reason=f"outcome unknown: {exc}")
        except EffectRejected as exc:
            written_after(self, intent, S.FAILED, reason=str(exc))
            raise Rejected(str(exc)) from exc
        self.session.hook(b.RESPONSE_READ, self.step)
        record = written_after(self, intent, S.COMMITTED, receipt)
        self.session.hook(b.RECEIPT_COMMITTED, self.step)
        return record
