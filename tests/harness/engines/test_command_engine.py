"""An engine that is a command: killed with its process group at a hook or a transport
boundary, never hearing the answer; hung, failed and malformed workers judged as such; two
workers taking turns; and the same in the real tier."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from killpoint.contract.boundaries import RESPONSE_RECEIVED
from killpoint.fake_services import FaultPlan, FaultRule
from killpoint.harness.catalogue import installed
from killpoint.harness.engines.command import Command
from killpoint.harness.history import History
from killpoint.harness.protocol import CLOCK, EngineSpec
from killpoint.harness.run.realtier import open_real_world, run_schedule_real
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave

TINY = Path(__file__).parents[2] / "support" / "command_engines" / "tiny.py"
EMAIL = installed().scenario("email")


def tiny(mode: str) -> EngineSpec:
    """The tiny engine, doing `mode` (a variable its workers inherit)."""
    os.environ["TINY_MODE"] = mode
    return Command(name=f"tiny-{mode}", start=(sys.executable, str(TINY))).spec(f"tiny:{mode}")


@pytest.fixture(autouse=True)
def _mode() -> Iterator[None]:
    yield
    os.environ.pop("TINY_MODE", None)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with World.open(tmp_path / "world") as opened:
        yield opened


def run(world: World, engine: EngineSpec, **schedule: object) -> History:
    plan = FaultSchedule.model_validate({"scenario": "email", "run_id": "r1", **schedule})
    return run_schedule(world, EMAIL, plan, engine)


def engine_folder(world: World) -> Path:
    return world.store.workdir / "engine"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead, only not yet reaped
        return stat.read().split(")")[-1].split()[0] != "Z"


def test_a_death_at_a_hook_kills_the_engine_and_every_process_it_started(world: World) -> None:
    crash = HitPoint(worker=0, step="notify", boundary="step.begin")
    history = run(world, tiny("child"), crashes=[crash])
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    child = int((engine_folder(world) / "child-worker-0").read_text())
    assert not alive(child)
    assert len(history.requests) == 1  # the worker after it sent the one message


def test_a_request_to_the_services_is_a_crash_point_whose_answer_the_engine_never_hears(
    world: World,
) -> None:
    crash = HitPoint(worker=0, step="notify", boundary=RESPONSE_RECEIVED)
    history = run(world, tiny("send"), crashes=[crash])
    assert history.workers[0].end == "killed"
    assert [r.operation for r in history.requests][:1] == ["send"]  # the mailer took it
    assert not (engine_folder(world) / "heard-worker-0").exists()
    # it never learned it had sent, so the next worker sent again: a second e-mail
    assert len([r for r in history.applied if r.operation == "send"]) == 2


def test_a_lost_response_reaches_the_command_as_a_connection_closed_without_an_answer(
    world: World,
) -> None:
    rule = FaultRule(service="mailer", operation="send", occurrence=1, mode="lost_response")
    history = run(world, tiny("send"), network=FaultPlan.of(rule))
    assert (engine_folder(world) / "lost").exists()
    assert history.workers[0].status == "needs_review"
    assert len(history.applied) == 1


@pytest.mark.parametrize(("mode", "handed_again"), [("send", True), ("ack", False)])
def test_a_start_message_is_handed_again_until_the_engine_says_it_took_it(
    world: World, mode: str, handed_again: bool
) -> None:
    crash = HitPoint(worker=0, step="notify", boundary="step.begin")
    history = run(world, tiny(mode), crashes=[crash])
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    assert (engine_folder(world) / "handed-worker-0").exists()
    assert (engine_folder(world) / "handed-worker-1").exists() is handed_again


def test_a_worker_past_its_timeout_is_killed_and_judged_hung(world: World) -> None:
    world.worker_timeout_s = 1.0
    history = run(world, tiny("hang"), max_workers=1)
    assert [w.end for w in history.workers] == ["hung"]


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("no-status", "without a status line"),
        ("bad-status", "status line it printed is malformed"),
        ("fails", "exited with status 3: the engine's own error"),
    ],
)
def test_a_command_that_ends_without_a_good_status_is_the_engines_failure(
    world: World, mode: str, said: str
) -> None:
    history = run(world, tiny(mode), max_workers=1)
    assert history.workers[0].end == "error"
    assert said in history.failures[0].error


def test_two_command_workers_take_turns_at_their_boundaries(world: World) -> None:
    pair = Interleave(after_worker=0, switch_at=(0,))
    crash = HitPoint(worker=0, step="notify", boundary="step.begin")
    history = run(world, tiny("send"), crashes=[crash], interleave=pair)
    hits = [(h.worker, h.boundary) for h in history.hits if h.worker > 0]
    assert hits[:2] == [(1, "step.begin"), (2, "step.begin")]  # one hit, then the other's turn
    assert {w.worker for w in history.workers} == {0, 1, 2}


def test_a_command_engine_that_reads_the_wall_clock_says_so() -> None:
    assert CLOCK in tiny("send").lacks
    harness_clock = Command(name="t", start=("true",), clock="harness").spec("t")
    assert CLOCK not in harness_clock.lacks


def test_in_the_real_tier_a_death_is_sigkill_of_the_worker_and_the_engine_group(
    tmp_path: Path,
) -> None:
    world = open_real_world(tmp_path / "real")
    try:
        crash = HitPoint(worker=0, step="notify", boundary="step.begin")
        plan = FaultSchedule(scenario="email", run_id="r1", tier="real", crashes=(crash,))
        history = run_schedule_real(world, EMAIL, plan, tiny("child"))
        assert [w.end for w in history.workers] == ["sigkill", "stopped"]
        child = int((world.store.workdir / "engine" / "child-worker-0").read_text())
        assert not alive(child)
    finally:
        world.close()
