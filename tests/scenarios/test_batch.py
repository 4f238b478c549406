"""A batch that dies halfway shows each item's state and sends only the missing items."""

from __future__ import annotations

from killpoint.contract.boundaries import RECEIPT_COMMITTED
from killpoint.contract.records import EffectStatus, RunStatus
from killpoint.harness.run.world import World
from killpoint.scenarios.batch import BATCH_SIZE, SCENARIO
from tests.scenarios.conftest import crash, run, times_applied

SECOND_RECEIPT = crash("post_items", RECEIPT_COMMITTED, occurrence=2)


def test_every_item_gets_its_own_ledger_row(world: World) -> None:
    history = run(world, SCENARIO, "rows")

    assert len({row.operation_id for row in history.effects}) == BATCH_SIZE
    assert all(row.status is EffectStatus.VERIFIED for row in history.effects)


def test_a_death_mid_batch_leaves_the_committed_items_in_the_ledger(world: World) -> None:
    # one worker only: the history is the store as the dead worker left it
    history = run(world, SCENARIO, "halfway", crashes=(SECOND_RECEIPT,), max_workers=1)

    assert [w.end for w in history.workers] == ["killed"]
    committed = [e for e in history.effects if e.status is EffectStatus.COMMITTED]
    assert len(committed) == 2


def test_crash_mid_batch_sends_each_item_once(world: World) -> None:
    history = run(world, SCENARIO, "partial", crashes=(SECOND_RECEIPT,))

    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    assert history.workers[0].journal_seq_end == 2  # two items were sent before the death
    for expected in history.expected:
        assert times_applied(history, expected) == 1, expected
    cms = [r for r in history.requests if r.service == "cms"]
    assert len(cms) == BATCH_SIZE * 2  # creates + reads: no item sent or looked up twice
