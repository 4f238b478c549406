"""expected_recovery on hand-built histories: a named case's own check, reported unknown when the
case's premise (the crash, the clock move, the tampering, the second worker) did not happen to
the engine under test, so a case it could not stage is never counted a pass or a violation."""

from __future__ import annotations

from typing import Any

from killpoint.harness.checkers.expectation import expectation
from killpoint.harness.history import History
from killpoint.harness.protocol import CLOCK, SHARED_PROCESS
from killpoint.harness.scenario import NotApplicable
from killpoint.harness.schedule import ClockJump, HitPoint, Interleave
from tests.support.histories import completed_run, hit, schedule, tampering

CRASH = HitPoint(worker=0, step="charge", boundary="after_effect")


def _holds(_: History) -> str | None:
    return None


def _violated(_: History) -> str | None:
    return "charged twice"


def _inapplicable(_: History) -> str | None:
    return NotApplicable("the engine keeps no ledger")


def _crashed_run(**changes: Any) -> History:
    """The good run whose schedule crashed worker 0 after the charge, a crash it reached."""
    fields: dict[str, Any] = {
        "schedule": schedule(crashes=[CRASH]),
        "hits": [hit("after_effect", 3.0, step="charge")],
    }
    return completed_run(**{**fields, **changes})


def test_a_case_whose_check_holds_is_true() -> None:
    verdict = expectation(_crashed_run(), _holds)
    assert verdict.checker == "expected_recovery"
    assert verdict.valid is True


def test_a_case_whose_check_fails_is_false_and_cites_the_schedule() -> None:
    verdict = expectation(_crashed_run(), _violated)
    assert verdict.valid is False
    assert verdict.summary == "charged twice"
    assert verdict.evidence == ["w0 charge:after_effect: charged twice"]


def test_a_case_that_does_not_apply_to_the_engine_is_unknown() -> None:
    verdict = expectation(_crashed_run(), _inapplicable)
    assert verdict.valid == "unknown"
    assert verdict.summary == "not applicable: the engine keeps no ledger"


def test_a_crash_point_the_engine_never_reached_makes_the_case_unknown_not_failed() -> None:
    """The crash did not happen, so a failing check says nothing about recovery from it."""
    verdict = expectation(_crashed_run(hits=[]), _violated)
    assert verdict.valid == "unknown"
    assert verdict.summary == (
        "not applicable: the engine never reached w0 charge:after_effect: "
        "the case's crash did not happen"
    )


def test_a_clock_jump_the_engine_never_reached_makes_the_case_unknown() -> None:
    jump = ClockJump(at=HitPoint(worker=0, step="charge", boundary="before_effect"), seconds=5)
    verdict = expectation(_crashed_run(schedule=schedule(clock_jumps=[jump])), _violated)
    assert verdict.valid == "unknown"
    assert "the case's clock jump did not happen" in (verdict.summary or "")


def test_a_tampering_the_engine_could_not_stage_makes_the_case_unknown() -> None:
    history = _crashed_run(tampered=[tampering("artifact_bitflip", applied=False)])
    verdict = expectation(history, _violated)
    assert verdict.valid == "unknown"
    assert "cannot stage artifact_bitflip" in (verdict.summary or "")


def test_a_tampering_the_engine_staged_leaves_the_case_judged() -> None:
    history = _crashed_run(tampered=[tampering("artifact_bitflip")])
    assert expectation(history, _violated).valid is False


def test_two_workers_in_one_process_for_an_engine_that_runs_one_make_the_case_unknown() -> None:
    paired = schedule(interleave=Interleave(after_worker=0))
    verdict = expectation(completed_run(schedule=paired, lacks=[SHARED_PROCESS]), _violated)
    assert verdict.valid == "unknown"
    assert "one worker per process" in (verdict.summary or "")


def test_two_workers_on_the_real_tier_are_judged_for_an_engine_that_runs_one_per_process() -> None:
    paired = schedule(interleave=Interleave(after_worker=0), tier="real")
    history = completed_run(schedule=paired, lacks=[SHARED_PROCESS])
    assert expectation(history, _violated).valid is False


def test_an_engine_that_runs_one_worker_per_process_is_judged_without_a_second_worker() -> None:
    history = completed_run(lacks=[SHARED_PROCESS])
    assert expectation(history, _violated).valid is False


def test_a_paired_case_is_judged_for_an_engine_that_shares_its_process() -> None:
    paired = schedule(interleave=Interleave(after_worker=0))
    assert expectation(completed_run(schedule=paired), _violated).valid is False


def test_a_moved_clock_for_an_engine_on_the_wall_clock_makes_the_case_unknown() -> None:
    history = completed_run(schedule=schedule(downtime_s=7200), lacks=[CLOCK])
    verdict = expectation(history, _violated)
    assert verdict.valid == "unknown"
    assert "reads the wall clock" in (verdict.summary or "")


def test_an_engine_on_the_wall_clock_is_judged_when_the_clock_does_not_move() -> None:
    assert expectation(completed_run(lacks=[CLOCK]), _violated).valid is False


def test_a_moved_clock_is_judged_for_an_engine_on_the_harness_clock() -> None:
    history = completed_run(schedule=schedule(downtime_s=7200))
    assert expectation(history, _violated).valid is False
