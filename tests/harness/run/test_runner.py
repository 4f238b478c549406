"""The in-process runner: deaths, recovery, replay identity, interleaved workers, schedules."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from killpoint import scenarios
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import Versions
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.results import combine
from killpoint.harness.run.interleave import Baton
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import (
    ClockJump,
    Deploy,
    FaultSchedule,
    HitPoint,
    Interleave,
    Tamper,
    load_schedule,
    save_schedule,
)


@pytest.fixture
def world(tmp_path: Path, store_url: str, checkpoint_key: bytes) -> Iterator[World]:
    with World.open(tmp_path / "world", store_url) as opened:
        yield opened


def test_a_killed_worker_is_replaced_and_the_run_recovers(world: World) -> None:
    crash = HitPoint(worker=0, step="publish", boundary="transport.response_received")
    schedule = FaultSchedule(scenario="research_publish", run_id="r1", crashes=(crash,))
    history = run_schedule(world, scenarios.get("research_publish"), schedule, REFERENCE)
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    assert history.final_status == "completed"
    assert sum(1 for a in history.applied if a.service == "cms") == 1
    assert combine(check_all(history, scenarios.get("research_publish").workflow)) is True


def test_replaying_a_saved_schedule_gives_an_identical_history(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    crash = HitPoint(worker=0, step="charge", boundary="effect.response_read")
    second = HitPoint(worker=1, step="charge", boundary="reconcile.looked_up")
    schedule = FaultSchedule(scenario="order_saga", run_id="replay", crashes=(crash, second))
    path = save_schedule(schedule, tmp_path / "schedule.json")
    histories = []
    for n in range(2):
        with World.open(tmp_path / f"world-{n}") as world:
            histories.append(
                run_schedule(world, scenarios.get("order_saga"), load_schedule(path), REFERENCE)
            )
    assert histories[0].identity() == histories[1].identity()
    assert len(histories[0].deaths) == 2


def test_two_recovering_workers_take_turns_and_only_one_wins_the_lease(world: World) -> None:
    schedule = FaultSchedule(
        scenario="order_saga",
        run_id="pair",
        crashes=(HitPoint(worker=0, step="ship", boundary="effect.prepared"),),
        interleave=Interleave(after_worker=0, switch_at=(0,)),
    )
    history = run_schedule(world, scenarios.get("order_saga"), schedule, REFERENCE)
    ends = sorted(w.end for w in history.workers)
    assert ends == ["error", "killed", "stopped"]
    loser = next(w for w in history.workers if w.end == "error")
    assert "LeaseHeldError" in loser.reason
    assert combine(check_all(history, scenarios.get("order_saga").workflow)) is True


def test_the_baton_runs_one_worker_at_a_time_and_hands_over_after_the_scheduled_hits() -> None:
    """Hits are counted over both workers from 0; after hits 1 and 3 the other worker runs (the
    clock moved on by the pause first); once one has finished, the other runs to its end."""
    pauses: list[float] = []
    baton = Baton({1, 3, 5}, pauses.append, 31.0)
    order: list[tuple[int, int]] = []

    def worker(slot: int, hits: int) -> None:
        baton.wait_turn(slot)
        try:
            for n in range(hits):
                order.append((slot, n))
                baton.after_hit(slot)
        finally:
            baton.finish(slot)

    threads = [threading.Thread(target=worker, args=(slot, 3)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert order == [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (1, 2)]
    assert pauses == [31.0, 31.0]  # hit 5 came after worker 0 had finished: no pause, no switch


def test_a_paused_worker_whose_lease_expired_cannot_write(world: World) -> None:
    schedule = FaultSchedule(
        scenario="research_publish",
        run_id="pause",
        crashes=(HitPoint(worker=0, step="publish", boundary="effect.prepared"),),
        interleave=Interleave(after_worker=0, switch_at=(0, 3), pause_expires_lease=True),
    )
    history = run_schedule(world, scenarios.get("research_publish"), schedule, REFERENCE)
    assert any("StaleFenceError" in w.reason for w in history.workers)
    assert sum(1 for a in history.applied if a.service == "cms") == 1
    assert history.final_status == "completed"


def test_a_schedule_file_that_is_not_a_schedule_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"scenario": "order_saga", "crashes": "everywhere"}')
    with pytest.raises(KillpointError, match="not a killpoint fault schedule"):
        load_schedule(bad)
    with pytest.raises(KillpointError, match="cannot read schedule"):
        load_schedule(tmp_path / "missing.json")


def test_a_checkpoint_altered_twice_is_judged_on_what_it_became(world: World) -> None:
    """A second tampering rewrites what the first left, or leaves an unusable row alone."""
    crashes = (
        HitPoint(worker=0, step="ship", boundary="step.begin"),
        HitPoint(worker=1, step="ship", boundary="step.begin"),
    )
    for first, second, status in (
        ("legacy_v2", "legacy_v2", "completed"),
        ("legacy_unsafe", "legacy_v2", "quarantined"),
    ):
        schedule = FaultSchedule(
            scenario="order_saga",
            run_id=f"twice-{first}-{second}".replace("_", "-"),
            crashes=crashes,
            tamper=(Tamper(after_worker=0, kind=first), Tamper(after_worker=1, kind=second)),
        )
        history = run_schedule(world, scenarios.get("order_saga"), schedule, REFERENCE)
        assert history.final_status == status, (first, second)
        assert combine(check_all(history, scenarios.get("order_saga").workflow)) is True


def test_a_branch_that_is_then_tampered_is_not_taken_for_a_fork(world: World) -> None:
    """Found by the thorough Hypothesis profile: the oracle must not read lineage from a
    checkpoint it cannot trust (only its row is shown), or a branch looks like a fork."""
    schedule = FaultSchedule(
        scenario="research_publish",
        run_id="branch-then-tamper",
        crashes=(HitPoint(worker=1, step="validate_brief", boundary="step.begin"),),
        clock_jumps=(
            ClockJump(at=HitPoint(worker=0, step=None, boundary="lease.acquired"), seconds=31.0),
        ),
        tamper=(Tamper(after_worker=1, kind="flip_byte"),),
        deploys=(
            Deploy(
                from_worker=1,
                versions=Versions(
                    plan="publish-flow@5",
                    prompt="prompt@1+deploy",
                    model_contract="contract@1",
                    tool_schema="tools@1",
                ),
            ),
        ),
    )
    history = run_schedule(world, scenarios.get("research_publish"), schedule, REFERENCE)
    assert history.final_status == "quarantined"
    assert [c.trusted for c in history.checkpoints][-1] is False
    verdicts = check_all(history, scenarios.get("research_publish").workflow)
    assert combine(verdicts) is True, [v for v in verdicts if v.valid is not True]
