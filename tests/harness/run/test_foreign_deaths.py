"""Deaths of engines the harness did not write are what a SIGKILL would be, in both tiers.

A framework may call a hook on a thread of its own and swallow what it raises there; an engine
may hang; an engine may take its start message and die inside `start()`. Each is pinned on a
small engine written here against the public protocol only.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

import pytest
from pydantic import JsonValue

from killpoint.contract.records import Outcome
from killpoint.harness.checkers.progress import check_progress
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.run.realtier import open_real_world, run_schedule_real
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.scenarios import CATALOGUE
from tests.support.quiet import Quiet

SCENARIO = CATALOGUE["email"]  # any: these engines ignore what the scenario asks


class SwallowsOnItsThread(Quiet):
    """Checkpoints on a thread of its own, as LangGraph does, and swallows what it raises."""

    def resume(self, workflow_id: str) -> Outcome:
        def background() -> None:
            try:
                self.env.hook("checkpoint.committed", "first")
            except BaseException:
                self.note("swallowed a death")

        thread = threading.Thread(target=background)
        thread.start()
        thread.join()
        self.env.hook("checkpoint.committed", "second")
        self.note("wrote the second checkpoint")
        return super().resume(workflow_id)


class Hangs(Quiet):
    """The first worker blocks, as on a result that never comes."""

    def resume(self, workflow_id: str) -> Outcome:
        if self.env.owner == "worker-0":
            self.env.hook("step.begin", "wait")
            threading.Event().wait(20)
        return super().resume(workflow_id)


class DiesInStart(Quiet):
    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        self.note("start called")
        self.env.hook("start.accepted")
        return True


def _run(tier: str, engine: type[Quiet], tmp_path: Path, crash: HitPoint | None) -> History:
    schedule = FaultSchedule(
        scenario=SCENARIO.name,
        run_id="foreign",
        tier=tier,
        crashes=[] if crash is None else [crash],
    )
    spec = EngineSpec(name=engine.__name__, factory=engine)
    if tier == "real":
        with open_real_world(tmp_path / "world") as world:
            world.worker_timeout_s = 1.0
            return run_schedule_real(world, SCENARIO, schedule, spec)
    with World.open(tmp_path / "world") as world:
        world.worker_timeout_s = 1.0
        return run_schedule(world, SCENARIO, schedule, spec)


def _log(tmp_path: Path) -> list[str]:
    path = tmp_path / "world" / "log.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_death_swallowed_on_the_engine_s_own_thread_still_kills_the_worker(
    tmp_path: Path,
) -> None:
    crash = HitPoint(worker=0, step="first", boundary="checkpoint.committed")
    history = _run("inprocess", SwallowsOnItsThread, tmp_path, crash)
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    # the dead worker wrote nothing after its death; the next one wrote its own
    assert _log(tmp_path) == [
        "worker-0 swallowed a death",
        "worker-1 wrote the second checkpoint",
    ]


@pytest.mark.parametrize("tier", ["inprocess", "real"])
def test_a_hung_worker_is_killed_at_its_timeout_and_judged_by_progress(
    tier: str, tmp_path: Path
) -> None:
    history = _run(tier, Hangs, tmp_path, None)
    assert [w.end for w in history.workers] == ["hung", "stopped"]
    assert "no end after 1 s; last hit wait:step.begin" in history.workers[0].reason
    verdict = check_progress(history, SCENARIO.workflow)
    assert verdict.valid is False
    assert verdict.summary.startswith("worker 0 hung: the harness killed it")


@pytest.mark.parametrize("tier", ["inprocess", "real"])
def test_a_death_inside_start_has_the_message_delivered_again_in_both_tiers(
    tier: str, tmp_path: Path
) -> None:
    crash = HitPoint(worker=0, step=None, boundary="start.accepted")
    history = _run(tier, DiesInStart, tmp_path, crash)
    assert [w.end for w in history.workers][:2] in (["killed", "stopped"], ["sigkill", "stopped"])
    assert _log(tmp_path) == ["worker-0 start called", "worker-1 start called"]
