"""Smallest counterexample first, grouped by class, counted per phase: on hand-built runs."""

from __future__ import annotations

from typing import Any

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.findings import (
    fault_class,
    first_objection,
    phase_counts,
    schedule_size,
    smallest_first,
    violation_groups,
)
from killpoint.harness.results import RunKind, RunMeasures, RunResult, Verdict, combine
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave


def crash(worker: int, boundary: str, step: str | None = "charge") -> HitPoint:
    return HitPoint(worker=worker, step=step, boundary=boundary)


def run(
    run_id: str,
    kind: RunKind = "single",
    *,
    false: tuple[str, ...] = ("single_effect",),
    unknown: tuple[str, ...] = (),
    **schedule: Any,
) -> RunResult:
    verdicts = [Verdict(checker="monotonic", valid=True)]
    verdicts += [Verdict(checker=c, valid="unknown") for c in unknown]
    verdicts += [Verdict(checker=c, valid=False) for c in false]
    return RunResult(
        run_id=run_id,
        scenario="order_saga",
        kind=kind,
        label=run_id,
        schedule=FaultSchedule(scenario="order_saga", run_id=run_id, **schedule),
        final_status="completed",
        final_state="done",
        verdicts=verdicts,
        valid=combine(verdicts),
        measures=RunMeasures(),
    )


def test_a_schedules_size_counts_each_fault_it_injects() -> None:
    rule = FaultRule(service="payments", operation="create_charge", mode=FaultMode.LOST_RESPONSE)
    schedule = FaultSchedule(
        scenario="order_saga",
        run_id="r",
        crashes=(crash(0, "effect.request_sent"), crash(1, "step.begin")),
        network=FaultPlan(rules=(rule,)),
        redeliver_start=True,
    )
    assert schedule_size(schedule) == 4
    assert schedule_size(FaultSchedule(scenario="order_saga", run_id="r")) == 0


def test_the_one_crash_schedule_comes_before_double_crashes_whatever_their_ids() -> None:
    double = run("a-double", "double", crashes=(crash(0, "step.begin"), crash(1, "step.begin")))
    single = run("z-single", crashes=(crash(0, "effect.request_sent"),))
    later_worker = run("b-single", crashes=(crash(1, "effect.request_sent"),))
    assert [r.run_id for r in smallest_first([double, later_worker, single])] == [
        "z-single",
        "b-single",
        "a-double",
    ]


def test_the_first_objection_is_the_first_false_checker_then_the_first_unknown() -> None:
    assert first_objection(run("r", false=("budget", "single_effect"))) == "budget"
    assert first_objection(run("r", false=(), unknown=("progress",))) == "progress"
    assert first_objection(run("r", false=())) == ""


def test_a_fault_class_drops_the_step_and_names_the_last_fault() -> None:
    two = FaultSchedule(
        scenario="s",
        run_id="r",
        crashes=(crash(0, "step.begin", "validate"), crash(1, "effect.request_sent", "ship")),
    )
    assert fault_class(two) == "effect.request_sent"
    forked = FaultSchedule(scenario="s", run_id="r", interleave=Interleave(after_worker=0))
    assert fault_class(forked) == "two workers"
    assert fault_class(FaultSchedule(scenario="s", run_id="r")) == "no faults"


def test_violations_group_by_checker_and_fault_class_smallest_group_first() -> None:
    sent = crash(0, "effect.request_sent")
    runs = [
        run("d1", "double", crashes=(crash(0, "step.begin"), crash(1, "effect.request_sent"))),
        run("forked", "pair", crashes=(sent,), interleave=Interleave(after_worker=0)),
        run("s2", crashes=(crash(0, "effect.request_sent", "ship"),)),
        run("s1", crashes=(sent,)),
        run("b1", false=("budget",), crashes=(sent,)),
    ]
    groups = violation_groups(runs)
    assert [(g.checker, g.fault, [r.run_id for r in g.runs]) for g in groups] == [
        ("budget", "effect.request_sent", ["b1"]),
        ("single_effect", "effect.request_sent", ["s1", "s2", "d1"]),
        ("single_effect", "two workers", ["forked"]),
    ]
    assert groups[1].smallest.run_id == "s1"


def test_phase_counts_follow_the_campaigns_order_and_count_violating_and_unknown() -> None:
    runs = [
        run("g", "generated"),
        run("c", "clean", false=()),
        run("s1", false=()),
        run("s2", false=(), unknown=("progress",)),
        run("s3"),
    ]
    assert [(p.phase, p.runs, p.violating, p.unknown) for p in phase_counts(runs)] == [
        ("clean", 1, 0, 0),
        ("single", 3, 1, 1),
        ("generated", 1, 1, 0),
    ]
