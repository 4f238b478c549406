"""The saga refunds a charge whose shipment was refused, once, even across a crash."""

from __future__ import annotations

import pytest

from killpoint.harness.contract.boundaries import COMPENSATE_RECORDED, RESPONSE_READ
from killpoint.harness.contract.records import EffectStatus, RunStatus
from killpoint.scenarios.order_saga import REFUND_SCENARIO, SCENARIO
from tests.scenarios.conftest import DieAt, Died, Harness


def test_rejected_shipment_is_compensated_with_one_charge_and_one_refund(
    harness: Harness,
) -> None:
    workflow_id, _ = harness.start(REFUND_SCENARIO, "refund")

    outcome = harness.drive(REFUND_SCENARIO, workflow_id)

    assert outcome.status is RunStatus.COMPENSATED, outcome.reason
    assert outcome.state == "refund_verified"
    payments = harness.services.journal.applied_effects("payments")
    assert [e.operation for e in payments] == ["create_charge", "refund"]
    assert payments[1].business_key == payments[0].resource_id
    assert harness.services.journal.applied_effects("publisher") == []
    ledger = {e.step: e.status for e in harness.store.effects(workflow_id)}
    assert ledger["charge"] is EffectStatus.COMPENSATED
    assert ledger["ship"] is EffectStatus.FAILED
    assert ledger["refund"] is EffectStatus.VERIFIED


@pytest.mark.parametrize("boundary", [RESPONSE_READ, COMPENSATE_RECORDED])
def test_crash_inside_compensation_still_refunds_once(harness: Harness, boundary: str) -> None:
    workflow_id, _ = harness.start(REFUND_SCENARIO, "crash")
    with pytest.raises(Died):
        harness.engine(REFUND_SCENARIO, DieAt(boundary, step="refund")).resume(workflow_id)
    harness.after_death()

    outcome = harness.drive(REFUND_SCENARIO, workflow_id)

    assert outcome.status is RunStatus.COMPENSATED, outcome.reason
    operations = [e.operation for e in harness.services.journal.applied_effects("payments")]
    assert operations == ["create_charge", "refund"]


def test_happy_order_ships_and_never_refunds(harness: Harness) -> None:
    workflow_id, inp = harness.start(SCENARIO, "happy")

    outcome = harness.drive(SCENARIO, workflow_id)

    assert outcome.status is RunStatus.COMPLETED, outcome.reason
    operations = [e.operation for e in harness.services.journal.applied_effects("payments")]
    assert operations == ["create_charge"]
    assert len(harness.services.journal.applied_effects("publisher", str(inp["shipment_ref"]))) == 1
