"""Compaction keeps each workflow's latest checkpoint and every effect row."""

from __future__ import annotations

from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.reference.checkpoint import open_checkpoint
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker

KEY = TEST_KEY.encode()


def test_compaction_drops_old_checkpoints_beyond_the_window_only(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    assert new_worker().run("publish", "wf-old", {"slug": "a", "title": "A"}).status is (
        RunStatus.COMPLETED
    )
    effects_before = store.effects("wf-old")
    log_before = store.effect_log("wf-old")
    clock.advance(100)
    new_worker().run("pure", "wf-new", {})

    dropped = store.compact(clock.now(), keep_window_s=50, tenant="default")

    assert dropped == 3
    assert [c.sequence for c in store.checkpoints("wf-old")] == [4]
    assert store.compacted_below("wf-old") == 4
    assert [c.sequence for c in store.checkpoints("wf-new")] == [1, 2, 3]
    assert store.compacted_below("wf-new") == 0
    assert store.effects("wf-old") == effects_before
    assert store.effects("wf-old")[0].receipt is not None
    assert store.effect_log("wf-old") == log_before
    assert open_checkpoint(store.checkpoints("wf-old")[0], KEY, "default").status is (
        RunStatus.COMPLETED
    )
    assert new_worker().resume("wf-old").status is RunStatus.COMPLETED
    assert store.compact(clock.now(), keep_window_s=50, tenant="default") == 0


def test_compaction_never_drops_the_latest_checkpoint_however_old(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    new_worker().start("pure", "wf-1", {})
    clock.advance(10_000)
    assert store.compact(clock.now(), keep_window_s=1, tenant="default") == 0
    assert new_worker().resume("wf-1").status is RunStatus.COMPLETED
