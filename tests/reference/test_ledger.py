"""The effect ledger's names: one key per logical operation, stable across attempts."""

from __future__ import annotations

from killpoint.contract.records import EffectIntent, EffectStatus
from killpoint.reference.idempotency import fingerprint, idempotency_key, operation_id


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
