"""Campaign results for the report tests, built from the harness's own pydantic models.

The violating run is the seed's classic: worker 0 dies after the payment service committed a
charge and before the response was read; worker 1 (a mutant without the effect ledger) charges
again, so the payments journal holds two charges for one order. Its history has the shape the
in-process runner records (absolute journal sequence numbers, one shared injected clock).
"""

from __future__ import annotations

from typing import Any

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.contract.records import BudgetLimits
from killpoint.harness.history import ExpectedEffectRecord, History, HitRecord, WorkerRecord
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import (
    CampaignResult,
    EvidenceRef,
    MutantResult,
    RunMeasures,
    RunResult,
    ScenarioCoverage,
    Verdict,
    combine,
)
from killpoint.harness.schedule import FaultSchedule, HitPoint

T0 = 1_800_000_000.0
SAGA_LABELS = [
    "lease.acquired",
    "validate_order:step.begin",
    "validate_order:checkpoint.committed",
    "charge:step.begin",
    "charge:effect.prepared",
    "charge:transport.response_received",
    "charge:effect.receipt_committed",
    "charge:checkpoint.committed",
]
PUBLISH_LABELS = ["lease.acquired", "draft:step.begin", "publish:effect.started"]


def _schedule(scenario: str, run_id: str, label: str | None = None, **kw: Any) -> FaultSchedule:
    crashes: tuple[HitPoint, ...] = ()
    if label is not None:
        step, _, boundary = label.rpartition(":")
        crashes = (HitPoint(worker=0, step=step or None, boundary=boundary),)
    return FaultSchedule(scenario=scenario, run_id=run_id, crashes=crashes, **kw)


def _hit(worker: int, label: str, time: float, journal_seq: int) -> HitRecord:
    step, _, boundary = label.rpartition(":")
    return HitRecord(
        worker=worker,
        step=step or None,
        boundary=boundary,
        occurrence=1,
        time=time,
        journal_seq=journal_seq,
    )


def _request(seq: int, service: str, operation: str, outcome: str, t: float) -> dict[str, Any]:
    return {
        "seq": seq,
        "service": service,
        "operation": operation,
        "idempotency_key": None,
        "business_key": "order-r7",
        "fingerprint": f"fp-{operation}",
        "time": t,
        "outcome": outcome,
    }


def _checkpoint(sequence: int, state: str, t: float, status: str = "running") -> CheckpointRecord:
    return CheckpointRecord(sequence=sequence, state=state, status=status, created_at=t)


def duplicate_charge_history(schedule: FaultSchedule) -> History:
    w0 = [
        "lease.acquired",
        "validate_order:step.begin",
        "validate_order:checkpoint.built",
        "validate_order:checkpoint.committed",
        "charge:step.begin",
        "charge:effect.intent_built",
        "charge:effect.started",
        "charge:transport.response_received",
    ]
    w1 = [
        "lease.acquired",
        "charge:step.begin",
        "charge:effect.intent_built",
        "charge:effect.started",
        "charge:transport.response_received",
        "charge:effect.receipt_committed",
        "charge:checkpoint.built",
        "charge:checkpoint.committed",
        "ship:step.begin",
        "ship:effect.started",
        "ship:transport.response_received",
        "ship:checkpoint.built",
        "ship:checkpoint.committed",
    ]
    down = T0 + 60.0
    hits = [_hit(0, label, T0, 0 if i < 7 else 1) for i, label in enumerate(w0)]
    hits += [
        _hit(1, label, down, 1 if i < 4 else (2 if i < 10 else 3)) for i, label in enumerate(w1)
    ]
    requests = [
        _request(1, "payments", "create_charge", "applied", T0),
        _request(2, "payments", "create_charge", "applied", down),
        _request(3, "publisher", "publish", "lost_response", down),
    ]
    applied = [
        {
            **{
                k: requests[i][k]
                for k in (
                    "service",
                    "operation",
                    "business_key",
                    "idempotency_key",
                    "fingerprint",
                    "time",
                )
            },
            "seq": i + 1,
            "resource_id": f"ch_00000{i + 1}",
        }
        for i in (0, 1)
    ]
    return History(
        scenario="order_saga",
        workflow_id="order_saga:r7",
        schedule=schedule,
        limits=BudgetLimits(),
        expected=[ExpectedEffectRecord(service="payments", business_key="order-r7")],
        hits=hits,
        workers=[
            WorkerRecord(
                worker=0,
                owner="worker-0",
                plan_version="plan@1",
                prompt_version="prompt@1",
                end="killed",
                reason="killed at w0 charge:transport.response_received",
                hits=len(w0),
                started_at=T0,
                ended_at=T0,
                journal_seq_end=1,
            ),
            WorkerRecord(
                worker=1,
                owner="worker-1",
                plan_version="plan@1",
                prompt_version="prompt@1",
                end="stopped",
                status="completed",
                state="shipped",
                sequence=4,
                hits=len(w1),
                started_at=down,
                ended_at=down,
                journal_seq_end=3,
            ),
        ],
        checkpoints=[
            _checkpoint(1, "received", T0),
            _checkpoint(2, "validated", T0),
            _checkpoint(3, "charged", down),
            _checkpoint(4, "shipped", down, status="completed"),
        ],
        effects=[],
        approvals=[],
        requests=requests,
        applied=applied,
        final_status="completed",
        final_state="shipped",
    )


def _run(
    scenario: str,
    run_id: str,
    kind: Any,
    label: str,
    measures: RunMeasures,
    *,
    crashed: str | None = None,
    status: str = "completed",
    verdicts: list[Verdict] | None = None,
    schedule: FaultSchedule | None = None,
    history: History | None = None,
    schedule_file: str | None = None,
) -> RunResult:
    verdicts = verdicts or [Verdict(checker="single_effect", valid=True)]
    schedule = schedule or _schedule(scenario, run_id, crashed)
    valid = combine(verdicts)
    return RunResult(
        run_id=run_id,
        scenario=scenario,
        kind=kind,
        label=label,
        schedule=schedule,
        final_status=status,
        final_state="done",
        crashed_at=[c.label() for c in schedule.crashes],
        verdicts=verdicts,
        valid=valid,
        measures=measures,
        schedule_file=schedule_file,
        history=history,
    )


def violation_verdict() -> Verdict:
    return Verdict(
        checker="single_effect",
        valid=False,
        summary="payments charged order-r7 twice",
        evidence=[
            "journal #1: payments.create_charge [order-r7] at t=1800000000.0 → applied",
            "journal #2: payments.create_charge [order-r7] at t=1800000060.0 → applied",
        ],
        refs=[
            EvidenceRef(kind="request", index=1),
            EvidenceRef(kind="request", index=2),
            EvidenceRef(kind="effect", index=2),
            EvidenceRef(kind="worker", index=0),
            EvidenceRef(kind="hit", index=7),
        ],
    )


def sample_campaign() -> CampaignResult:
    """Two scenarios, eight runs (one violation), three mutants (one missed)."""
    died = dict(deaths=1, workers=2, resumed=True, recovered=True)
    bad_label = "charge:transport.response_received"
    bad_schedule = _schedule("order_saga", "r7", bad_label)
    runs = [
        _run(
            "order_saga",
            "r0",
            "clean",
            "clean",
            RunMeasures(workers=1, checkpoints=5, steps=10, store_rows=12, store_bytes=4000),
        ),
        _run(
            "order_saga",
            "r1",
            "single",
            "w0 lease.acquired",
            RunMeasures(
                **died,
                recovery_steps=10,
                recovery_clock_s=60.0,
                recovery_wall_s=0.02,
                checkpoints=5,
                steps=10,
                store_rows=12,
                store_bytes=4100,
            ),
            crashed="lease.acquired",
        ),
        _run(
            "order_saga",
            "r2",
            "single",
            "w0 charge:effect.prepared",
            RunMeasures(
                **died,
                recovery_steps=6,
                recovery_clock_s=61.0,
                recovery_wall_s=0.03,
                checkpoints=5,
                steps=11,
                store_rows=14,
                store_bytes=4600,
            ),
            crashed="charge:effect.prepared",
        ),
        _run(
            "order_saga",
            "r7",
            "single",
            f"w0 {bad_label}",
            RunMeasures(
                **died,
                recovery_steps=13,
                recovery_clock_s=120.0,
                recovery_wall_s=0.05,
                checkpoints=4,
                steps=12,
                store_rows=16,
                store_bytes=5200,
                duplicate_effects=1,
                downstream_attempts=2,
                within_budget=False,
            ),
            crashed=bad_label,
            verdicts=[violation_verdict(), Verdict(checker="monotonic_sequence", valid=True)],
            schedule=bad_schedule,
            history=duplicate_charge_history(bad_schedule),
            schedule_file="killpoint-out/schedules/order_saga-r7.json",
        ),
        _run(
            "order_saga",
            "r8",
            "network",
            "payments.create_charge:lost_response",
            RunMeasures(
                workers=1,
                checkpoints=5,
                steps=10,
                store_rows=12,
                store_bytes=4000,
                needs_review=True,
                unresolved_effect_age_s=300.0,
            ),
            status="needs_review",
            schedule=_schedule(
                "order_saga",
                "r8",
                network=FaultPlan.of(
                    FaultRule(
                        service="payments", operation="create_charge", mode=FaultMode.LOST_RESPONSE
                    )
                ),
            ),
        ),
        _run(
            "research_publish",
            "p0",
            "clean",
            "clean",
            RunMeasures(workers=1, checkpoints=3, steps=6, store_rows=8, store_bytes=2000),
        ),
        _run(
            "research_publish",
            "p1",
            "single",
            "w0 publish:effect.started",
            RunMeasures(
                **died,
                recovery_steps=4,
                recovery_clock_s=60.0,
                recovery_wall_s=0.01,
                checkpoints=3,
                steps=6,
                store_rows=9,
                store_bytes=2100,
                unresolved_effect_age_s=60.0,
                migration_failures=1,
            ),
            crashed="publish:effect.started",
        ),
        _run(
            "research_publish",
            "p2",
            "generated",
            "generated #1",
            RunMeasures(
                deaths=2,
                workers=3,
                resumed=True,
                recovered=False,
                recovery_steps=3,
                recovery_clock_s=130.0,
                recovery_wall_s=0.04,
                checkpoints=2,
                steps=4,
                store_rows=5,
                store_bytes=1500,
            ),
            status="failed",
            verdicts=[Verdict(checker="progress", valid="unknown", summary="budget ran out")],
        ),
    ]
    scenarios = [
        ScenarioCoverage(
            scenario="order_saga",
            boundaries_discovered=SAGA_LABELS,
            boundaries_crashed=["lease.acquired", "charge:effect.prepared", bad_label],
            runs=5,
            violations=1,
            outcome_by_boundary={
                "lease.acquired": "ok",
                "charge:effect.prepared": "ok",
                bad_label: "violation",
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
    mutants = [
        MutantResult(
            mutant="no_ledger",
            description="sends without an intent record",
            caught=True,
            checker="single_effect",
            runs_to_detection=4,
            schedule=bad_schedule,
        ),
        MutantResult(
            mutant="skip_verify",
            caught=True,
            checker="verified_completion",
            runs_to_detection=2,
            schedule=_schedule("order_saga", "m2", "charge:effect.prepared"),
        ),
        MutantResult(mutant="stale_approval", caught=False),
    ]
    return CampaignResult(
        engine="reference",
        tier="inprocess",
        backend="sqlite",
        seed=1234,
        profile="ci",
        shard="1/2",
        started_at="2026-05-01T12:00:00Z",
        duration_s=12.5,
        scenarios=scenarios,
        runs=runs,
        mutants=mutants,
    )


def empty_campaign() -> CampaignResult:
    return CampaignResult(
        engine="reference",
        tier="inprocess",
        backend="sqlite",
        started_at="2026-05-01T12:00:00Z",
        scenarios=[],
        runs=[],
    )
