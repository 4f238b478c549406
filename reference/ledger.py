"""The effect ledger's write-ahead protocol (seed 001, step 3) and reconciliation.

For each logical action: commit the intent and its key (`prepared`), commit `started` and spend
an attempt, call the service, commit the receipt (`committed`). A timeout is `unknown`, never
`failed`; an unknown or started effect is reconciled by asking the service with the same key
before anything is sent again. Each step is a public method so a mutant can break exactly one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import JsonValue

from killpoint.contract import boundaries as b
from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.boundaries import BoundaryHook
from killpoint.contract.clock import Clock
from killpoint.contract.errors import CannotTell, EffectRejected, OutcomeUnknown
from killpoint.contract.records import (
    EffectIntent,
    EffectRecord,
    EffectStatus,
    Receipt,
    RunStatus,
)
from killpoint.reference.errors import StaleFenceError
from killpoint.reference.idempotency import fingerprint, idempotency_key, operation_id
from killpoint.reference.lease import Lease
from killpoint.reference.store import Store

S = EffectStatus
LOOKUP_TRIES = 3
LEASE_RENEW_S = 30.0


class Stop(Exception):
    """The run must stop here with this status and reason (needs review, budget exhausted …)."""

    def __init__(self, status: RunStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Rejected(Exception):
    """A downstream service definitely refused an effect; the workflow takes `on_failure`."""


def intent_of(record: EffectRecord) -> EffectIntent:
    """The intent a ledger row was written for: what reconciling or verifying it asks about."""
    return EffectIntent(operation=record.intent, service=record.service, args=record.args)


@dataclass
class Session:
    """One worker's hold on one workflow: the lease, the clock, the hook, the attempts left,
    and the outputs of the steps its run has committed."""

    store: Store
    lease: Lease
    clock: Clock
    hook: BoundaryHook
    attempts_left: int
    outputs: dict[str, JsonValue] = field(default_factory=dict)

    @property
    def workflow_id(self) -> str:
        return self.lease.workflow_id

    def check_lease(self) -> None:
        """Refuse to send once the lease has lapsed: a paused worker may have been replaced, and
        fencing tokens guard the store, not the downstream service."""
        if self.clock.now() >= self.lease.expires_at:
            raise StaleFenceError(
                f"lease of {self.lease.owner} lapsed at {self.lease.expires_at}; not sending"
            )

    def renew(self, ttl: float) -> None:
        """Extend the lease across a long wait, so a patient worker is not taken for dead."""
        self.lease = self.store.renew_lease(self.lease, self.clock.now(), ttl)


class EffectExecutor:
    """Runs one effect intent to a resolved ledger row, or stops the run with the reason."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        self.session = session
        self.adapter = adapter
        self.step = step

    def key(self, intent: EffectIntent) -> str:
        return idempotency_key(self.session.workflow_id, self.step, intent)

    def execute(
        self, intent: EffectIntent, guard: Callable[[], None] | None = None
    ) -> EffectRecord:
        record = self.write_ahead(intent)
        while True:
            if record.status in (S.COMMITTED, S.VERIFIED, S.COMPENSATED):
                return record
            if record.status is S.FAILED:
                raise Rejected(record.reason)
            if record.status is S.NEEDS_REVIEW:
                raise Stop(RunStatus.NEEDS_REVIEW, record.reason)
            if record.status.unresolved:
                record = self.reconcile(intent, record)
            else:
                record = self.attempt(intent, record, guard)

    def prepared(self, intent: EffectIntent) -> EffectRecord:
        """The ledger row of an intent about to be written ahead: in memory, not yet sent."""
        s = self.session
        return EffectRecord(
            workflow_id=s.workflow_id,
            operation_id=operation_id(self.step, intent),
            step=self.step,
            service=intent.service,
            intent=intent.operation,
            args=intent.args,
            idempotency_key=self.key(intent),
            fingerprint=fingerprint(intent),
            status=S.PREPARED,
            attempts=0,
            updated_at=s.clock.now(),
        )

    def write_ahead(self, intent: EffectIntent) -> EffectRecord:
        s = self.session
        s.hook(b.INTENT_BUILT, self.step)
        record = s.store.prepare_effect(s.lease, s.clock.now(), self.prepared(intent))
        s.hook(b.INTENT_COMMITTED, self.step)
        return record

    def attempt(
        self, intent: EffectIntent, record: EffectRecord, guard: Callable[[], None] | None
    ) -> EffectRecord:
        s = self.session
        if guard is not None:
            guard()
        if s.attempts_left <= 0:
            raise Stop(RunStatus.BUDGET_EXHAUSTED, "attempts budget exhausted")
        record = self.mark(record, S.STARTED, expect=(S.PREPARED,), attempt=True)
        s.attempts_left -= 1
        s.hook(b.STARTED_COMMITTED, self.step)
        s.check_lease()
        try:
            receipt = self.adapter.send(intent, record.idempotency_key)
        except OutcomeUnknown as exc:
            return self.on_unknown(record, str(exc))
        except EffectRejected as exc:
            self.mark(record, S.FAILED, expect=(S.STARTED,), reason=str(exc))
            raise Rejected(str(exc)) from exc
        s.hook(b.RESPONSE_READ, self.step)
        record = self.mark(record, S.COMMITTED, expect=(S.STARTED,), receipt=receipt)
        s.hook(b.RECEIPT_COMMITTED, self.step)
        return record

    def on_unknown(self, record: EffectRecord, why: str) -> EffectRecord:
        """A timeout or 5xx: the effect may have happened. Record that, then reconcile."""
        return self.mark(record, S.UNKNOWN, expect=(S.STARTED,), reason=f"outcome unknown: {why}")

    def reconcile(self, intent: EffectIntent, record: EffectRecord) -> EffectRecord:
        s = self.session
        try:
            receipt = self._lookup(intent, record)
        except CannotTell as exc:
            if self.adapter.idempotent:
                return self.mark(
                    record,
                    S.PREPARED,
                    expect=(S.STARTED, S.UNKNOWN),
                    reason=f"cannot tell ({exc}); the service dedups: retry with the same key",
                )
            reason = (
                f"{intent.service} {intent.operation}: outcome unknown and the service cannot "
                f"be asked ({exc}); {'irreversible: ' if self.adapter.irreversible else ''}"
                "a second attempt could duplicate it"
            )
            self.mark(record, S.NEEDS_REVIEW, expect=(S.STARTED, S.UNKNOWN), reason=reason)
            raise Stop(RunStatus.NEEDS_REVIEW, reason) from exc
        s.hook(b.RECONCILE_LOOKED_UP, self.step)
        if receipt is not None:
            record = self.mark(
                record,
                S.COMMITTED,
                expect=(S.STARTED, S.UNKNOWN),
                receipt=receipt,
                reason="reconciled: the service has the effect",
            )
        else:
            record = self.mark(
                record,
                S.PREPARED,
                expect=(S.STARTED, S.UNKNOWN),
                reason="reconciled: confirmed absent; retry with the same key",
            )
        s.hook(b.RECONCILE_RESOLVED, self.step)
        return record

    def _lookup(self, intent: EffectIntent, record: EffectRecord) -> Receipt | None:
        if not self.adapter.queryable:
            raise CannotTell(f"{intent.service} has no lookup")
        for _ in range(LOOKUP_TRIES):
            try:
                return self.adapter.lookup(intent, record.idempotency_key)
            except OutcomeUnknown:
                self.session.clock.sleep(1.0)
                self.session.renew(LEASE_RENEW_S)
        raise CannotTell(f"{intent.service} did not answer {LOOKUP_TRIES} lookups")

    def mark(
        self,
        record: EffectRecord,
        status: EffectStatus,
        *,
        expect: tuple[EffectStatus, ...],
        receipt: Receipt | None = None,
        reason: str = "",
        attempt: bool = False,
    ) -> EffectRecord:
        s = self.session
        return s.store.mark_effect(
            s.lease,
            s.clock.now(),
            record.operation_id,
            status,
            expect=expect,
            receipt=receipt,
            reason=reason,
            attempt=attempt,
        )
