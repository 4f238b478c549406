"""The receiver checks the handoff contract and refuses one it cannot honour."""

from __future__ import annotations

import pytest

from killpoint.harness.contract.boundaries import HANDOFF_ACCEPTED, HANDOFF_SENT
from killpoint.harness.contract.records import RunStatus
from killpoint.scenarios.handoff import INCOMPATIBLE_SCENARIO, SCENARIO
from tests.scenarios.conftest import DieAt, Died, Harness


def test_clean_handoff_declares_sent_and_accepted_boundaries(harness: Harness) -> None:
    workflow_id, _ = harness.start(SCENARIO, "bounds")
    recorder = DieAt("never")

    outcome = harness.engine(SCENARIO, recorder).resume(workflow_id)

    assert outcome.status is RunStatus.COMPLETED, outcome.reason
    names = [boundary for boundary, _ in recorder.seen]
    assert names.index(HANDOFF_SENT) < names.index(HANDOFF_ACCEPTED)


def test_incompatible_contract_needs_review_and_publishes_nothing(harness: Harness) -> None:
    workflow_id, _ = harness.start(INCOMPATIBLE_SCENARIO, "schema")

    outcome = harness.drive(INCOMPATIBLE_SCENARIO, workflow_id)

    assert outcome.status is RunStatus.NEEDS_REVIEW
    assert "not supported" in outcome.reason
    assert harness.services.journal.applied_effects("publisher") == []


def test_contract_past_its_deadline_after_downtime_is_refused(harness: Harness) -> None:
    workflow_id, _ = harness.start(SCENARIO, "late")
    with pytest.raises(Died):
        harness.engine(SCENARIO, DieAt(HANDOFF_SENT)).resume(workflow_id)
    harness.after_death()
    with pytest.raises(Died):  # the contract is written and recorded this time
        harness.engine(SCENARIO, DieAt("step.begin", step="accept_contract")).resume(workflow_id)
    harness.clock.advance(2 * 3_600)  # down longer than the contract's deadline

    outcome = harness.drive(SCENARIO, workflow_id)

    assert outcome.status is RunStatus.NEEDS_REVIEW
    assert "deadline" in outcome.reason
    assert harness.services.journal.applied_effects("publisher") == []
