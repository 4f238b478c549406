"""The effect ledger's names: one key per logical operation, stable across attempts."""

from __future__ import annotations

import pytest

from killpoint.contract.clock import FakeClock
from killpoint.contract.errors import OutcomeUnknown
from killpoint.contract.records import EffectIntent, EffectStatus, Receipt, RunStatus
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import StaleFenceError
from killpoint.reference.idempotency import fingerprint, idempotency_key, operation_id
from killpoint.reference.ledger import EffectExecutor, Session, Stop


def intent(**args: object) -> EffectIntent:
    return EffectIntent(operation="charge", service="payments", args=dict(args))


def test_the_key_is_a_pure_function_of_workflow_step_operation_and_arguments() -> None:
    key = idempotency_key("wf-1", "charge", intent(order_id="o", amount=1))
    assert key == idempotency_key("wf-1", "charge", intent(amount=1, order_id="o"))
    assert key.startswith("kp-") and len(key) == 43
    others = {
        idempotency_key("wf-2", "charge", intent(order_id="o", amount=1)),
        idempotency_key("wf-1", "charge2", intent(order_id="o", amount=1)),
        idempotency_key("wf-1", "charge", intent(order_id="o", amount=2)),
    }
    assert key not in others and len(others) == 3


def test_operation_id_and_fingerprint_name_the_request() -> None:
    assert operation_id("pay", intent(order_id="o")) == "pay/charge"
    assert fingerprint(intent(order_id="o")) != fingerprint(intent(order_id="p"))
    assert len(fingerprint(intent(order_id="o"))) == 64


def test_only_started_and_unknown_effects_are_unresolved() -> None:
    assert {s for s in EffectStatus if s.unresolved} == {EffectStatus.STARTED, EffectStatus.UNKNOWN}


class _Silent:
    """A service whose every answer is lost: sends and lookups time out."""

    service = "payments"
    idempotent = False
    queryable = True
    irreversible = True

    def __init__(self) -> None:
        self.lookups = 0

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        raise OutcomeUnknown("timed out")

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        self.lookups += 1
        raise OutcomeUnknown("timed out")

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        return False


def _session(engine: Engine, clock: FakeClock, attempts: int = 3) -> Session:
    assert engine.start("pure", "wf-1", {"n": 1})
    lease = engine.store.acquire_lease("wf-1", "worker-a", 60, clock.now())
    return Session(engine.store, lease, clock, lambda *_: None, attempts_left=attempts)


def test_a_service_that_never_answers_is_asked_three_times_a_second_apart_then_escalated(
    engine: Engine, clock: FakeClock
) -> None:
    """Reconciliation asks, waits a second and renews the lease for 30 s after each lost
    answer; after three it stops for review instead of sending again."""
    session = _session(engine, clock)
    service = _Silent()
    started = clock.now()
    with pytest.raises(Stop, match="did not answer 3 lookups") as stop:
        EffectExecutor(session, service, "charge").execute(intent(amount=5))
    assert stop.value.status is RunStatus.NEEDS_REVIEW
    assert service.lookups == 3
    assert clock.now() == started + 3.0
    assert session.lease.expires_at == clock.now() + 30.0
    assert session.attempts_left == 2


def test_a_lease_is_lapsed_at_the_very_instant_it_expires(engine: Engine, clock: FakeClock) -> None:
    session = _session(engine, clock)
    clock.advance(session.lease.expires_at - clock.now())
    with pytest.raises(StaleFenceError, match="not sending"):
        session.check_lease()
