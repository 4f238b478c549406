"""Recovery objectives: each crash measured off hand-built histories, judged on hand-built
figures; a miss is a judgement of its own, and no declaration is never a pass."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from killpoint.contract.records import BudgetLimits
from killpoint.harness.history import History, HitRecord, WorkerRecord
from killpoint.harness.objectives import (
    CrashRecovery,
    RecoveryObjectives,
    crash_recoveries,
    judge,
)
from killpoint.harness.schedule import FaultSchedule

TIGHT = RecoveryObjectives(rpo_steps=1, rto_s=90.0)


def _crash(lost: int, back: float | None) -> CrashRecovery:
    return CrashRecovery(worker=0, at="charge:effect.prepared", lost_steps=lost, recovery_s=back)


def _begin(worker: int, step: str, time: float) -> HitRecord:
    return HitRecord(
        worker=worker, step=step, boundary="step.begin", occurrence=1, time=time, journal_seq=0
    )


def _worker(number: int, start: float, end: float, how: Any = "stopped", **kw: Any) -> WorkerRecord:
    return WorkerRecord(
        worker=number,
        owner=f"worker-{number}",
        plan_version="p",
        prompt_version="p",
        end=how,
        started_at=start,
        ended_at=end,
        **kw,
    )


def _history(hits: list[HitRecord], workers: list[WorkerRecord]) -> History:
    return History(
        scenario="order_saga",
        workflow_id="wf",
        schedule=FaultSchedule(scenario="order_saga", run_id="r1"),
        limits=BudgetLimits(),
        expected=[],
        hits=hits,
        workers=workers,
        checkpoints=[],
        effects=[],
        approvals=[],
        requests=[],
        applied=[],
        final_status="completed",
        final_state="done",
    )


# worker 0 did `validate` and died inside `charge`, at clock 10; the downtime is 60 s
DIED_IN_CHARGE = [_begin(0, "validate", 0.0), _begin(0, "charge", 5.0)]
DEAD = _worker(0, 0.0, 10.0, "killed", reason="killed at charge:effect.prepared")


def test_a_crash_inside_a_step_costs_that_step_and_the_downtime() -> None:
    hits = [*DIED_IN_CHARGE, _begin(1, "charge", 70.0), _begin(1, "ship", 70.0)]
    [crash] = crash_recoveries(_history(hits, [DEAD, _worker(1, 70.0, 70.0, status="completed")]))
    assert (crash.lost_steps, crash.recovery_s, crash.back_by) == (1, 60.0, "resumed")
    assert crash.at == "charge:effect.prepared"


def test_an_engine_that_starts_over_loses_every_step_it_had_begun() -> None:
    hits = [*DIED_IN_CHARGE, _begin(1, "validate", 70.0), _begin(1, "charge", 70.0)]
    [crash] = crash_recoveries(_history(hits, [DEAD, _worker(1, 70.0, 70.0, status="completed")]))
    assert crash.lost_steps == 2


def test_two_workers_recovering_at_once_redo_a_step_once() -> None:
    hits = [*DIED_IN_CHARGE, _begin(1, "charge", 70.0), _begin(2, "charge", 71.0)]
    workers = [DEAD, _worker(1, 70.0, 70.0, status="running"), _worker(2, 70.0, 72.0)]
    [crash] = crash_recoveries(_history(hits, workers))
    assert (crash.lost_steps, crash.recovery_s) == (1, 60.0)


def test_a_stop_for_review_without_a_step_is_back_and_a_lease_wait_counts() -> None:
    review = _worker(1, 70.0, 190.0, status="needs_review")
    [crash] = crash_recoveries(_history(DIED_IN_CHARGE, [DEAD, review]))
    assert (crash.lost_steps, crash.recovery_s, crash.back_by) == (0, 180.0, "stopped")


def test_a_run_that_never_resumes_nor_stops_is_never_back() -> None:
    errored = _worker(1, 70.0, 70.0, "error")
    [crash] = crash_recoveries(_history(DIED_IN_CHARGE, [DEAD, errored]))
    assert (crash.recovery_s, crash.back_by) == (None, None)
    assert judge(TIGHT, [crash]).rto == "missed"


def test_each_death_is_its_own_crash() -> None:
    hits = [*DIED_IN_CHARGE, _begin(1, "charge", 70.0), _begin(2, "charge", 140.0)]
    second = _worker(1, 70.0, 80.0, "killed", reason="killed at charge:effect.started")
    crashes = crash_recoveries(_history(hits, [DEAD, second, _worker(2, 140.0, 140.0)]))
    assert [(c.worker, c.lost_steps, c.recovery_s) for c in crashes] == [(0, 1, 60.0), (1, 1, 60.0)]


def test_within_both_objectives_is_met() -> None:
    judged = judge(TIGHT, [_crash(1, 60.0), _crash(0, 90.0)])
    assert (judged.rpo, judged.rto, judged.missed) == ("met", "met", False)


def test_one_crash_past_an_objective_misses_it_for_the_run() -> None:
    judged = judge(TIGHT, [_crash(1, 60.0), _crash(2, 120.0)])
    assert (judged.rpo, judged.rto, judged.missed) == ("missed", "missed", True)
    assert TIGHT.rpo_met(_crash(2, 0.0)) is False and TIGHT.rto_met(_crash(0, 90.5)) is False


def test_no_objective_declared_is_not_declared_never_met() -> None:
    judged = judge(None, [_crash(9, 9999.0)])
    assert (judged.rpo, judged.rto, judged.missed) == ("not_declared", "not_declared", False)


def test_an_objective_left_out_is_not_declared_beside_one_judged() -> None:
    judged = judge(RecoveryObjectives(rto_s=30.0), [_crash(9, 60.0)])
    assert (judged.rpo, judged.rto) == ("not_declared", "missed")


def test_a_run_without_a_crash_is_not_judged() -> None:
    judged = judge(TIGHT, [])
    assert (judged.rpo, judged.rto, judged.missed) == ("no_crash", "no_crash", False)


@pytest.mark.parametrize(
    "fields",
    [{}, {"rpo_steps": -1}, {"rpo_steps": 10_001}, {"rto_s": -1.0}, {"rto_s": math.inf}],
)
def test_an_objective_is_declared_within_bounds(fields: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        RecoveryObjectives(**fields)


def test_an_engine_that_reports_no_step_leaves_its_redone_work_unknown() -> None:
    review = _worker(1, 70.0, 190.0, status="needs_review")
    [crash] = crash_recoveries(_history([], [DEAD, review]))
    assert (crash.lost_steps, crash.recovery_s, crash.back_by) == (None, 180.0, "stopped")
    # its stop is an upper bound on its resume: within the RTO it is met, past it unknown
    assert judge(RecoveryObjectives(rpo_steps=5, rto_s=200.0), [crash]).rpo == "unknown"
    assert judge(RecoveryObjectives(rto_s=200.0), [crash]).rto == "met"
    assert judge(RecoveryObjectives(rto_s=100.0), [crash]).rto == "unknown"


def test_a_miss_beats_an_unknown_crash_of_the_same_run() -> None:
    unknown = CrashRecovery(worker=0, at="a", lost_steps=None, recovery_s=500.0)
    judged = judge(TIGHT, [unknown, _crash(1, 60.0)])
    assert (judged.rpo, judged.rto) == ("unknown", "unknown")
    assert judge(TIGHT, [unknown, _crash(2, 60.0)]).rpo == "missed"
