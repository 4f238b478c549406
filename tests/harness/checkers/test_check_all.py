"""check_all: every checker's verdict, with the checks that judge time on the world clock left
unknown for an engine that reads the wall clock when the schedule moved the world clock."""

from __future__ import annotations

from killpoint.harness.checkers import TIMED, WALL_CLOCK, check_all
from killpoint.harness.history import History
from killpoint.harness.protocol import CLOCK
from tests.support.histories import WORKFLOW, completed_run, schedule

LONG_DOWNTIME = schedule(downtime_s=3600.0)


def _wall_clock_verdicts(history: History) -> set[str]:
    return {v.checker for v in check_all(history, WORKFLOW) if v.summary == WALL_CLOCK}


def test_a_wall_clock_engine_under_a_time_move_gets_unknown_from_the_timed_checks_only() -> None:
    history = completed_run(lacks=[CLOCK], schedule=LONG_DOWNTIME)
    verdicts = {v.checker: v for v in check_all(history, WORKFLOW)}
    assert _wall_clock_verdicts(history) == set(TIMED)
    assert all(verdicts[name].valid == "unknown" for name in TIMED)


def test_a_wall_clock_engine_whose_schedule_moves_no_time_is_judged_on_time_as_any() -> None:
    assert _wall_clock_verdicts(completed_run(lacks=[CLOCK])) == set()


def test_an_engine_on_the_world_clock_is_judged_on_time_however_far_it_moves() -> None:
    assert _wall_clock_verdicts(completed_run(schedule=LONG_DOWNTIME)) == set()
