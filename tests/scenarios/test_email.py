"""A lost e-mail response ends in needs_review with one message sent, never two."""

from __future__ import annotations

from killpoint.fake_services import FaultMode, FaultPlan, FaultRule
from killpoint.harness.contract.records import EffectStatus, RunStatus
from killpoint.harness.ground_truth import applied
from killpoint.scenarios.email import SCENARIO
from tests.scenarios.conftest import Harness


def test_lost_response_ends_in_review_with_exactly_one_message(harness: Harness) -> None:
    harness.services.set_plan(
        FaultPlan.of(
            FaultRule(
                service="mailer", operation="send", occurrence=1, mode=FaultMode.LOST_RESPONSE
            )
        )
    )
    workflow_id, inp = harness.start(SCENARIO, "lost")

    outcome = harness.drive(SCENARIO, workflow_id)
    again = harness.drive(SCENARIO, workflow_id)  # a later worker must not send it either

    assert outcome.status is RunStatus.NEEDS_REVIEW, outcome.reason
    assert again.status is RunStatus.NEEDS_REVIEW
    (expected,) = SCENARIO.expected_effects(inp)
    assert len(applied(expected, harness.services.journal)) == 1
    assert len(harness.services.journal.requests("mailer")) == 1
    (effect,) = harness.store.effects(workflow_id)
    assert effect.status is EffectStatus.NEEDS_REVIEW
