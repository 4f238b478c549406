"""Two workers switch at what the harness sees at the transport, not only at an engine's hooks.

The engine here reports no boundary at all: it runs the whole workflow with the scenario's own
adapters, looking a post up before creating it (check-then-act). Only the transport shows its
reads and writes, and that is enough for a pair of workers to be switched between one's
lookup and its write, where both find nothing and both post.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from pydantic import JsonValue

from killpoint.contract.boundaries import READ_RETURNED, no_hook
from killpoint.contract.records import Outcome
from killpoint.harness.checkers.single_effect import check_single_effect
from killpoint.harness.engines.units import Keying, Units, initial_state, next_unit, outcome_of
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec, WorkerEnv
from killpoint.harness.run import interleave
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave
from killpoint.scenarios import CATALOGUE
from tests.support.quiet import Quiet

SCENARIO = CATALOGUE["research_publish"]


class Unhooked:
    """Keeps nothing between workers and reports no boundary: each worker does it all."""

    def __init__(self, env: WorkerEnv, scenario: Scenario) -> None:
        self.units = Units(dataclasses.replace(env, hook=no_hook), scenario, Keying.KEYED)
        self.input = env.workdir / "input.json"

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        self.input.write_text(json.dumps(input))
        return True

    def resume(self, workflow_id: str) -> Outcome:
        state = initial_state(self.units.workflow, json.loads(self.input.read_text()), 0.0)
        while (step := next_unit(self.units.workflow, state)) is not None:
            state = self.units.run(workflow_id, step, state)
        return outcome_of(self.units.workflow, workflow_id, state, 1)

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None: ...


def _run(world: World, schedule: FaultSchedule) -> History:
    return run_schedule(world, SCENARIO, schedule, EngineSpec(name="unhooked", factory=Unhooked))


def test_a_pair_switched_at_a_transport_hit_shows_check_then_act(tmp_path: Path) -> None:
    first_read = HitPoint(worker=0, step=None, boundary=READ_RETURNED)
    with World.open(tmp_path / "world") as world:
        solo = _run(world, FaultSchedule(scenario=SCENARIO.name, run_id="solo"))
        assert {h.boundary for h in solo.hits} == {READ_RETURNED, "transport.response_received"}
        posts = {}
        for k in range(len(solo.hits)):
            pair = Interleave(after_worker=0, switch_at=(k,))
            schedule = FaultSchedule(
                scenario=SCENARIO.name, run_id=f"pair-{k}", crashes=[first_read], interleave=pair
            )
            history = _run(world, schedule)
            posts[k] = check_single_effect(history, SCENARIO.workflow).valid
    duplicated = [k for k, valid in posts.items() if valid is False]
    # one switch between a lookup and its write is enough; most switches are harmless
    assert duplicated and len(duplicated) < len(posts)


class WaitsForTheOther(Quiet):
    """The second worker of a pair waits on a result only the first can give, reaching no
    boundary meanwhile (as a worker waits on a framework's lock or lease)."""

    def resume(self, workflow_id: str) -> Outcome:
        done = self.env.workdir / "first-done"
        self.env.hook("step.begin", "work")  # worker 1's is the switch: worker 2's turn
        if self.env.owner == "worker-2":
            while not done.exists():
                time.sleep(0.05)
        done.touch()
        return super().resume(workflow_id)


def test_a_pair_whose_running_worker_waits_on_the_other_gets_its_turn_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(interleave, "PATIENCE", 0.3)
    pair = Interleave(after_worker=0, switch_at=(0,))
    crash = HitPoint(worker=0, step="work", boundary="step.begin")
    schedule = FaultSchedule(
        scenario=SCENARIO.name, run_id="patient", crashes=[crash], interleave=pair
    )
    spec = EngineSpec(name="waits", factory=WaitsForTheOther)
    with World.open(tmp_path / "world") as world:
        history = run_schedule(world, SCENARIO, schedule, spec)
    assert [w.end for w in history.workers] == ["killed", "stopped", "stopped"]
