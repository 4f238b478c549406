"""Campaign results for the report tests, built from the harness's own typed records.

Two scenarios, eight runs, three mutants. The one violating run carries the history of the
seed's classic duplicate charge (`tests.support.duplicate_charge`), and so does the run that
caught the first mutant; every schedule names its engine, as a campaign's do, so its replay
command is complete.
"""

from __future__ import annotations

from typing import Any

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.history import History
from killpoint.harness.results import (
    CampaignResult,
    ExpectedCatch,
    MutantResult,
    RunKind,
    RunMeasures,
    RunResult,
    ScenarioCoverage,
    Verdict,
    combine,
)
from killpoint.harness.schedule import FaultSchedule, HitPoint, Tamper
from tests.support.duplicate_charge import BAD_LABEL, duplicate_charge_history, violation_verdict

ENGINE = "reference"
SAGA_LABELS = [
    "lease.acquired",
    "validate_order:step.begin",
    "validate_order:checkpoint.committed",
    "charge:step.begin",
    "charge:effect.prepared",
    BAD_LABEL,
    "charge:effect.receipt_committed",
    "charge:checkpoint.committed",
]
PUBLISH_LABELS = ["lease.acquired", "draft:step.begin", "publish:effect.started"]


def _schedule(
    scenario: str, run_id: str, label: str | None = None, engine: str = ENGINE, **kw: Any
) -> FaultSchedule:
    crashes: tuple[HitPoint, ...] = ()
    if label is not None:
        step, _, boundary = label.rpartition(":")
        crashes = (HitPoint(worker=0, step=step or None, boundary=boundary),)
    return FaultSchedule(scenario=scenario, run_id=run_id, engine=engine, crashes=crashes, **kw)


def _run(
    scenario: str,
    run_id: str,
    kind: RunKind,
    label: str,
    measures: RunMeasures,
    *,
    crashed: str | None = None,
    status: str = "completed",
    verdicts: list[Verdict] | None = None,
    schedule: FaultSchedule | None = None,
    history: History | None = None,
    schedule_file: str | None = None,
    reason: str = "",
) -> RunResult:
    verdicts = verdicts or [Verdict(checker="single_effect", valid=True)]
    schedule = schedule or _schedule(scenario, run_id, crashed)
    return RunResult(
        run_id=run_id,
        scenario=scenario,
        kind=kind,
        label=label,
        schedule=schedule,
        final_status=status,
        final_state="done",
        final_reason=reason,
        crashed_at=[c.label() for c in schedule.crashes],
        verdicts=verdicts,
        valid=combine(verdicts),
        measures=measures,
        schedule_file=schedule_file,
        history=history,
    )


def _stored(checkpoints: int, steps: int, rows: int, size: int) -> dict[str, int]:
    return {"checkpoints": checkpoints, "steps": steps, "store_rows": rows, "store_bytes": size}


def _clean(stored: dict[str, int], **more: Any) -> RunMeasures:
    """What one worker that never died measured."""
    return RunMeasures(workers=1, **stored, **more)


def _recovered(recovery_steps: int, clock_s: float, wall_s: float, **more: Any) -> RunMeasures:
    """What a run measured whose worker 0 died once and worker 1 recovered it (unless `more`
    says otherwise)."""
    died: dict[str, Any] = {"deaths": 1, "workers": 2, "resumed": True, "recovered": True}
    return RunMeasures(
        **{**died, **more},
        recovery_steps=recovery_steps,
        recovery_clock_s=clock_s,
        recovery_wall_s=wall_s,
    )


def duplicate_charge_run(
    engine: str = ENGINE, schedule_file: str = "killpoint-out/schedules/order_saga-r7.json"
) -> RunResult:
    """The seed's classic violation: charged twice after a death in the lost-response window."""
    schedule = _schedule("order_saga", "r7", BAD_LABEL, engine)
    measures = _recovered(
        13, 120.0, 0.05, **_stored(4, 12, 16, 5200), duplicate_effects=1, downstream_attempts=2
    ).model_copy(update={"within_budget": False})
    return _run(
        "order_saga",
        "r7",
        "single",
        f"w0 {BAD_LABEL}",
        measures,
        crashed=BAD_LABEL,
        verdicts=[violation_verdict(), Verdict(checker="monotonic_sequence", valid=True)],
        schedule=schedule,
        history=duplicate_charge_history(schedule),
        schedule_file=schedule_file,
    )


def _saga_runs() -> list[RunResult]:
    """Five runs of the order saga: clean, two survived crashes, the violation, a lost charge."""
    lost_charge = FaultRule(
        service="payments", operation="create_charge", mode=FaultMode.LOST_RESPONSE
    )
    prepared = "charge:effect.prepared"
    return [
        _run("order_saga", "r0", "clean", "clean", _clean(_stored(5, 10, 12, 4000))),
        _run(
            "order_saga",
            "r1",
            "single",
            "w0 lease.acquired",
            _recovered(10, 60.0, 0.02, **_stored(5, 10, 12, 4100)),
            crashed="lease.acquired",
        ),
        _run(
            "order_saga",
            "r2",
            "single",
            f"w0 {prepared}",
            _recovered(6, 61.0, 0.03, **_stored(5, 11, 14, 4600)),
            crashed=prepared,
        ),
        duplicate_charge_run(),
        _run(
            "order_saga",
            "r8",
            "network",
            "payments.create_charge:lost_response",
            _clean(_stored(5, 10, 12, 4000), needs_review=True, unresolved_effect_age_s=300.0),
            status="needs_review",
            schedule=_schedule("order_saga", "r8", network=FaultPlan.of(lost_charge)),
        ),
    ]


def _publish_runs() -> list[RunResult]:
    """Three runs of research_publish: clean, a survived crash, a generated run that gave up."""
    started = _recovered(
        4, 60.0, 0.01, **_stored(3, 6, 9, 2100), unresolved_effect_age_s=60.0, migration_failures=1
    )
    died_twice = {"deaths": 2, "workers": 3, "recovered": False}
    gave_up = _recovered(3, 130.0, 0.04, **_stored(2, 4, 5, 1500), **died_twice)
    return [
        _run("research_publish", "p0", "clean", "clean", _clean(_stored(3, 6, 8, 2000))),
        _run(
            "research_publish",
            "p1",
            "single",
            "w0 publish:effect.started",
            started,
            crashed="publish:effect.started",
        ),
        _run(
            "research_publish",
            "p2",
            "generated",
            "generated #1",
            gave_up,
            status="failed",
            verdicts=[Verdict(checker="progress", valid="unknown", summary="budget ran out")],
        ),
    ]


def _coverage() -> list[ScenarioCoverage]:
    return [
        ScenarioCoverage(
            scenario="order_saga",
            boundaries_discovered=SAGA_LABELS,
            boundaries_crashed=["lease.acquired", "charge:effect.prepared", BAD_LABEL],
            runs=5,
            violations=1,
            outcome_by_boundary={
                "lease.acquired": "ok",
                "charge:effect.prepared": "ok",
                BAD_LABEL: "violation",
            },
        ),
        ScenarioCoverage(
            scenario="research_publish",
            boundaries_discovered=PUBLISH_LABELS,
            boundaries_crashed=["publish:effect.started"],
            runs=3,
            violations=0,
            outcome_by_boundary={"publish:effect.started": "needs_review"},
        ),
    ]


def _mutants() -> list[MutantResult]:
    return [
        MutantResult(
            mutant="no_ledger",
            description="sends without an intent record",
            caught=True,
            checker="single_effect",
            runs_to_detection=4,
            found_by="plan",
            seconds_to_detection=0.8,
            schedule=_schedule("order_saga", "r7", BAD_LABEL, "mutant:no_ledger"),
            run=duplicate_charge_run(
                "mutant:no_ledger", "killpoint-out/mutants/no_ledger/schedules/order_saga-r7.json"
            ),
        ),
        MutantResult(
            mutant="skip_verify",
            caught=True,
            checker="verified_completion",
            runs_to_detection=2,
            found_by="exploration",
            seconds_to_detection=12.25,
            schedule=_schedule("order_saga", "m2", "charge:effect.prepared"),
        ),
        MutantResult(mutant="stale_approval", caught=False),
    ]


def sample_campaign() -> CampaignResult:
    """Two scenarios, eight runs (one violation), three mutants (one missed)."""
    return CampaignResult(
        engine=ENGINE,
        tier="inprocess",
        backend="sqlite",
        seed=1234,
        profile="ci",
        shard="1/2",
        started_at="2026-05-01T12:00:00Z",
        duration_s=12.5,
        scenarios=_coverage(),
        runs=_saga_runs() + _publish_runs(),
        mutants=_mutants(),
    )


def empty_campaign() -> CampaignResult:
    return CampaignResult(
        engine=ENGINE,
        tier="inprocess",
        backend="sqlite",
        started_at="2026-05-01T12:00:00Z",
        scenarios=[],
        runs=[],
    )


EXPECTING_TEST = "tests/test_oracle.py::test_the_oracle_catches_a_broken_engine"


def with_a_catch_as_expected(campaign: CampaignResult) -> CampaignResult:
    """`campaign` with a test's campaign of a broken engine beside it, which that test ran with
    `fail_on_violation=False` and passed: 1 of its 2 runs charged twice."""
    broken = CampaignResult(
        engine="mutant:no_ledger",
        tier="inprocess",
        backend="sqlite",
        started_at="2026-05-01T12:00:00Z",
        scenarios=_coverage()[:1],
        runs=[
            _run("order_saga", "r0", "clean", "clean", _clean(_stored(5, 10, 12, 4000))),
            duplicate_charge_run("mutant:no_ledger", "tmp/campaign-1/schedules/order_saga-r7.json"),
        ],
    )
    catch = ExpectedCatch.of(EXPECTING_TEST, broken)
    return campaign.model_copy(update={"caught_as_expected": [catch]})


TAMPERED = "checkpoint integrity tag does not match its bytes"


def _quarantined(run_id: str, kind: str, history: bool) -> RunResult:
    """A run whose last checkpoint was tampered with: the engine refused it (quarantined), as
    it must, and the run waits for a person; the oracle passed it."""
    schedule = _schedule(
        "order_saga",
        run_id,
        "ship:step.begin",
        tamper=(Tamper(after_worker=0, kind=kind),),
    )
    return _run(
        "order_saga",
        run_id,
        "named",
        schedule.describe(),
        _recovered(2, 60.0, 0.01, **_stored(4, 8, 10, 4000)),
        status="quarantined",
        schedule=schedule,
        history=duplicate_charge_history(schedule) if history else None,
        schedule_file=f"killpoint-out/schedules/order_saga-{run_id}.json",
        reason=TAMPERED,
    )


def doubtful_campaign() -> CampaignResult:
    """`sample_campaign` with two quarantined runs (one keeps its history), so that waiting for
    a person is more than `needs_review`: 10 runs, 1 violating, 1 unknown, 3 waiting."""
    campaign = sample_campaign()
    quarantined = [_quarantined("q1", "flip_byte", True), _quarantined("q2", "rollback", False)]
    return campaign.model_copy(
        update={"runs": [*campaign.runs, *quarantined], "campaign_dir": "killpoint-out/c-1"}
    )
