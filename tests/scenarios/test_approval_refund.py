"""The approval gate holds the refund until a human grants it, and a lapsed grant re-asks."""

from __future__ import annotations

import pytest

from killpoint.harness.contract.boundaries import STEP_BEGIN
from killpoint.harness.contract.records import RunStatus
from killpoint.scenarios.approval_refund import GATE, SCENARIO
from tests.scenarios.conftest import DieAt, Died, Harness


def test_refund_waits_at_the_gate_until_granted(harness: Harness) -> None:
    workflow_id, _ = harness.start(SCENARIO, "gate")
    first = harness.engine(SCENARIO).resume(workflow_id)
    assert first.status is RunStatus.WAITING_APPROVAL
    assert harness.engine(SCENARIO).resume(workflow_id).status is RunStatus.WAITING_APPROVAL
    assert [e.operation for e in harness.services.journal.applied_effects("payments")] == [
        "create_charge"
    ]

    harness.engine(SCENARIO).grant(workflow_id, GATE, "ops@example.test", ttl_s=600)
    done = harness.engine(SCENARIO).resume(workflow_id)

    assert done.status is RunStatus.COMPLETED, done.reason
    assert [e.operation for e in harness.services.journal.applied_effects("payments")] == [
        "create_charge",
        "refund",
    ]


def test_grant_that_expired_during_downtime_goes_back_to_the_gate(harness: Harness) -> None:
    workflow_id, _ = harness.start(SCENARIO, "expired")
    harness.engine(SCENARIO).resume(workflow_id)
    harness.engine(SCENARIO).grant(workflow_id, GATE, "ops@example.test", ttl_s=60)
    with pytest.raises(Died):
        harness.engine(SCENARIO, DieAt(STEP_BEGIN, step="refund")).resume(workflow_id)
    harness.clock.advance(120)  # the worker stays dead past the grant's expiry

    outcome = harness.engine(SCENARIO).resume(workflow_id)

    assert outcome.status is RunStatus.WAITING_APPROVAL, outcome.reason
    assert [e.operation for e in harness.services.journal.applied_effects("payments")] == [
        "create_charge"
    ]
