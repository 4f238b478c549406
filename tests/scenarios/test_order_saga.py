"""The saga refunds a charge whose shipment was refused, once, even across a crash."""

from __future__ import annotations

import pytest

from killpoint.contract.boundaries import COMPENSATE_RECORDED, RESPONSE_READ
from killpoint.contract.records import EffectStatus, RunStatus
from killpoint.harness.run.world import World
from killpoint.scenarios.order_saga import REFUND_SCENARIO, SCENARIO
from tests.scenarios.conftest import applied, crash, effects_of, run


def test_rejected_shipment_is_compensated_with_one_charge_and_one_refund(world: World) -> None:
    history = run(world, REFUND_SCENARIO)

    assert history.final_status == RunStatus.COMPENSATED, history.final_reason
    assert history.final_state == "refund_verified"
    charge, refund = effects_of(history, "payments")
    assert (charge.operation, refund.operation) == ("create_charge", "refund")
    assert refund.business_key == charge.resource_id
    assert applied(history, "publisher") == []
    ledger = {e.step: e.status for e in history.effects}
    assert ledger["charge"] is EffectStatus.COMPENSATED
    assert ledger["ship"] is EffectStatus.FAILED
    assert ledger["refund"] is EffectStatus.VERIFIED


@pytest.mark.parametrize("boundary", [RESPONSE_READ, COMPENSATE_RECORDED])
def test_crash_inside_compensation_still_refunds_once(world: World, boundary: str) -> None:
    history = run(world, REFUND_SCENARIO, crashes=(crash("refund", boundary),))

    assert [w.end for w in history.workers] == ["killed", "stopped"]
    assert history.final_status == RunStatus.COMPENSATED, history.final_reason
    assert applied(history, "payments") == ["create_charge", "refund"]


def test_happy_order_ships_and_never_refunds(world: World) -> None:
    history = run(world, SCENARIO)

    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    assert applied(history, "payments") == ["create_charge"]
    (shipment,) = (e for e in history.expected if e.service == "publisher")
    assert applied(history, "publisher", shipment.business_key) == ["publish"]
