"""The stateful exploration: the reference engine survives it, a mutant does not, and whatever
the machine does is a fault schedule that `run_schedule` replays to the same history."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from killpoint.harness.checkers import check_all
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, load_schedule
from killpoint.scenarios import get
from killpoint.scenarios.mutants import MUTANTS
from killpoint.scenarios.stateful import SCHEDULE_DIR_ENV, KillpointMachine, machine_for

# The ordinary pytest tests: one per scenario, under the loaded profile (`ci` by default).
TestOrderSaga = machine_for("order_saga").TestCase
TestResearchPublish = machine_for("research_publish").TestCase
TestApprovalRefund = machine_for("approval_refund").TestCase

FIXED = settings(
    max_examples=100,
    stateful_step_count=4,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(autouse=True)
def schedules_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "schedules"
    monkeypatch.setenv(SCHEDULE_DIR_ENV, str(folder))
    return folder


def replay(tmp_path: Path, schedule: FaultSchedule, engine: EngineSpec) -> History:
    with World.open(tmp_path / f"replay-{len(list(tmp_path.iterdir()))}") as world:
        return run_schedule(world, get(schedule.scenario), schedule, engine)


def test_the_machine_and_run_schedule_give_the_same_history(tmp_path: Path) -> None:
    seen: list[History] = []

    class Recording(machine_for("approval_refund")):  # type: ignore[misc]
        def finished(self, history: History) -> None:
            seen.append(history)

    run_state_machine_as_test(Recording, settings=FIXED.__class__(FIXED, max_examples=12))
    assert any(h.schedule.faulty for h in seen)
    for history in seen:
        again = replay(tmp_path, history.schedule, Recording.engine)
        assert again.identity() == history.identity(), history.schedule.describe()


def _mutant() -> EngineSpec:
    return MUTANTS["only_conversation_saved"]


def test_the_machine_finds_a_mutant_and_shrinks_it_to_a_replayable_schedule(
    tmp_path: Path, schedules_in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    machine: type[KillpointMachine] = machine_for("order_saga", _mutant())
    with pytest.raises(AssertionError, match="oracle violated"):
        run_state_machine_as_test(machine, settings=FIXED)
    found = machine.failures[-1]  # Hypothesis replays the shrunk example last
    assert found.faults() <= 3, found.schedule.describe()
    # a second charge, or (the payments service deduplicating it) a send its ledger never spent
    assert {"single_effect", "attempts_accounted"} & set(found.violated), found.violated
    # the printed file is the schedule, and replaying it reproduces the violation exactly
    assert found.path.parent == schedules_in_tmp
    assert load_schedule(found.path) == found.schedule
    again = replay(tmp_path, found.schedule, machine.engine)
    assert again.identity() == found.history.identity()
    verdicts = check_all(again, get("order_saga").workflow)
    assert {v.checker for v in verdicts if v.valid is False} == set(found.violated)
