"""A batch that dies halfway shows each item's state and sends only the missing items."""

from __future__ import annotations

import pytest

from killpoint.harness.contract.boundaries import RECEIPT_COMMITTED
from killpoint.harness.contract.records import EffectStatus, RunStatus
from killpoint.harness.ground_truth import applied
from killpoint.scenarios.batch import BATCH_SIZE, SCENARIO
from tests.scenarios.conftest import DieAt, Died, Harness


def test_every_item_gets_its_own_ledger_row(harness: Harness) -> None:
    workflow_id, _ = harness.start(SCENARIO, "rows")

    harness.drive(SCENARIO, workflow_id)

    rows = harness.store.effects(workflow_id)
    assert len({row.operation_id for row in rows}) == BATCH_SIZE
    assert all(row.status is EffectStatus.VERIFIED for row in rows)


def test_crash_mid_batch_keeps_partial_progress_and_sends_each_item_once(
    harness: Harness,
) -> None:
    workflow_id, inp = harness.start(SCENARIO, "partial")
    with pytest.raises(Died):
        harness.engine(SCENARIO, DieAt(RECEIPT_COMMITTED, nth=2)).resume(workflow_id)

    committed = [
        e for e in harness.store.effects(workflow_id) if e.status is EffectStatus.COMMITTED
    ]
    assert len(committed) == 2
    harness.after_death()

    outcome = harness.drive(SCENARIO, workflow_id)

    assert outcome.status is RunStatus.COMPLETED, outcome.reason
    for expected in SCENARIO.expected_effects(inp):
        assert len(applied(expected, harness.services.journal)) == 1, expected
    assert len(harness.services.journal.requests("cms")) == BATCH_SIZE * 2  # creates + reads
