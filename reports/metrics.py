"""Recovery-quality metrics of a campaign, the seed's operational list, from raw run measures.

A campaign records raw measures per run (`RunMeasures`); this module turns them into the numbers
an operator watches: resume success, duplicate side effects, unresolved effect age, recovery
time, checkpoints per successful run, storage growth, migration failures, manual intervention
(every run waiting for a person, as the operator queue lists them),
resumes within budget, plus boundary coverage and the mutation score. Pure functions over a
`CampaignResult`, no I/O, so shards merged into one result give the same metrics as one run.

A rate keeps its numerator and denominator (`3/4` reads better than `0.75` in a report) and is
`None` when nothing was measured, never a made-up 0 or 1.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, computed_field

from killpoint.harness.findings import fault_class, phase_counts, smallest_first, violation_groups
from killpoint.harness.results import CampaignResult, RunResult, ScenarioCoverage, Verdict, combine
from killpoint.reports.objectives import ObjectivesSummary, objectives_summary
from killpoint.reports.queue import WAITING


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class Rate(_Model):
    count: int
    of: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def value(self) -> float | None:
        return self.count / self.of if self.of else None


class Distribution(_Model):
    """Nearest-rank percentiles of raw values, kept for histograms."""

    values: list[float]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def p50(self) -> float | None:
        return percentile(self.values, 50)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def p90(self) -> float | None:
        return percentile(self.values, 90)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def p95(self) -> float | None:
        return percentile(self.values, 95)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def p99(self) -> float | None:
        return percentile(self.values, 99)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def max(self) -> float | None:
        return max(self.values) if self.values else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean(self) -> float | None:
        return sum(self.values) / len(self.values) if self.values else None


class RecoveryTime(_Model):
    """From the first death to the end of the run, over runs that resumed after a death."""

    clock_s: Distribution
    wall_s: Distribution
    steps: Distribution


class StorageGrowth(_Model):
    rows_per_workflow: float | None
    bytes_per_workflow: float | None
    rows_per_step: float | None
    bytes_per_step: float | None
    points: list[tuple[int, int]]  # (steps, store bytes), one per run, for the growth chart


class ScenarioBoundaries(_Model):
    scenario: str
    discovered: int
    crashed: int
    missing: list[str]  # discovered but never crashed

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratio(self) -> float | None:
        return self.crashed / self.discovered if self.discovered else None


class BoundaryCoverage(_Model):
    scenarios: list[ScenarioBoundaries]
    discovered: int
    crashed: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratio(self) -> float | None:
        return self.crashed / self.discovered if self.discovered else None


class CampaignMetrics(_Model):
    runs: int
    violations: int
    # runs with a death that recovered to a terminal state AND passed the oracle / runs with a
    # death: a run that charged twice reached a terminal state, but it did not resume well
    resume_success: Rate
    duplicate_effects: Rate  # runs with a duplicate effect / runs
    unresolved_effect_age_s: Distribution  # over runs that ended with one
    recovery_time: RecoveryTime
    checkpoints_per_successful_run: Distribution  # over completed runs without a violation
    storage: StorageGrowth
    migration_failures: int
    runs_with_migration_failures: int
    # of those, runs the oracle passed: an unsafe legacy checkpoint refused (quarantined) as it
    # must be, an expected outcome rather than a failure of the engine
    expected_migration_failures: int
    needs_review: Rate  # runs ending in needs_review / runs
    # runs ending waiting for a person, whatever the reason (`queue.WAITING`) / runs: the runs
    # the operator queue lists
    manual_intervention: Rate
    expected_needs_review: int  # of those, runs the oracle passed: a stop its faults explain
    within_budget: Rate  # resumed runs that kept within their original budget / resumed runs
    coverage: BoundaryCoverage
    mutation_score: Rate | None  # caught / mutants; None when no mutant was run
    objectives: ObjectivesSummary  # the declared RPO/RTO per scenario, and the runs missing them

    @computed_field  # type: ignore[prop-decorator]
    @property
    def within_budget_pct(self) -> float | None:
        value = self.within_budget.value
        return None if value is None else 100.0 * value


def percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile: always one of the measured values, None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def _mean(total: float, count: int) -> float | None:
    return total / count if count else None


def _storage(runs: list[RunResult]) -> StorageGrowth:
    rows = sum(r.measures.store_rows for r in runs)
    size = sum(r.measures.store_bytes for r in runs)
    steps = sum(r.measures.steps for r in runs)
    return StorageGrowth(
        rows_per_workflow=_mean(rows, len(runs)),
        bytes_per_workflow=_mean(size, len(runs)),
        rows_per_step=_mean(rows, steps),
        bytes_per_step=_mean(size, steps),
        points=[(r.measures.steps, r.measures.store_bytes) for r in runs],
    )


def boundary_coverage(result: CampaignResult) -> BoundaryCoverage:
    per = [
        ScenarioBoundaries(
            scenario=s.scenario,
            discovered=len(s.boundaries_discovered),
            crashed=len(set(s.boundaries_crashed) & set(s.boundaries_discovered)),
            missing=[b for b in s.boundaries_discovered if b not in set(s.boundaries_crashed)],
        )
        for s in result.scenarios
    ]
    return BoundaryCoverage(
        scenarios=per,
        discovered=sum(p.discovered for p in per),
        crashed=sum(p.crashed for p in per),
    )


def campaign_metrics(result: CampaignResult) -> CampaignMetrics:
    runs = result.runs
    died = [r for r in runs if r.measures.deaths > 0]
    resumed = [r for r in runs if r.measures.resumed]
    successful = [r for r in runs if r.final_status == "completed" and r.valid is not False]
    ages = [r.measures.unresolved_effect_age_s for r in runs]
    mutants = result.mutants
    return CampaignMetrics(
        runs=len(runs),
        violations=len(result.violations),
        resume_success=Rate(
            count=sum(r.measures.recovered and r.valid is not False for r in died), of=len(died)
        ),
        duplicate_effects=Rate(
            count=sum(r.measures.duplicate_effects > 0 for r in runs), of=len(runs)
        ),
        unresolved_effect_age_s=Distribution(values=[a for a in ages if a is not None]),
        recovery_time=RecoveryTime(
            clock_s=Distribution(values=[r.measures.recovery_clock_s for r in resumed]),
            wall_s=Distribution(values=[r.measures.recovery_wall_s for r in resumed]),
            steps=Distribution(values=[float(r.measures.recovery_steps) for r in resumed]),
        ),
        checkpoints_per_successful_run=Distribution(
            values=[float(r.measures.checkpoints) for r in successful]
        ),
        storage=_storage(runs),
        migration_failures=sum(r.measures.migration_failures for r in runs),
        runs_with_migration_failures=sum(r.measures.migration_failures > 0 for r in runs),
        expected_migration_failures=sum(
            r.measures.migration_failures > 0 and r.valid is True for r in runs
        ),
        needs_review=Rate(count=sum(r.measures.needs_review for r in runs), of=len(runs)),
        manual_intervention=Rate(count=sum(r.final_status in WAITING for r in runs), of=len(runs)),
        expected_needs_review=sum(r.measures.needs_review and r.valid is True for r in runs),
        within_budget=Rate(count=sum(r.measures.within_budget for r in resumed), of=len(resumed)),
        coverage=boundary_coverage(result),
        mutation_score=(
            Rate(count=sum(m.caught for m in mutants), of=len(mutants)) if mutants else None
        ),
        objectives=objectives_summary(result),
    )


def summary_json(result: CampaignResult) -> dict[str, Any]:
    """The machine-readable summary `killpoint run --json` prints (JSON-safe values only)."""
    valid = combine([Verdict(checker=run.run_id, valid=run.valid) for run in result.runs])
    return {
        "engine": result.engine,
        "lacks": result.lacks,
        "tier": result.tier,
        "backend": result.backend,
        "seed": result.seed,
        "profile": result.profile,
        "shard": result.shard,
        "valid": valid,
        "scenarios": [s.scenario for s in result.scenarios],
        "runs": len(result.runs),
        "duration_s": result.duration_s,
        "wall_s": result.wall_s,
        "phases": phases_json(result.runs),
        "per_scenario": {s.scenario: _scenario_json(s) for s in result.scenarios},
        "violation_groups": groups_json(result.violations),
        "violations": _violations_json(result),
        "mutants": [
            {
                **m.model_dump(mode="json", exclude={"schedule", "run"}),
                "schedule_file": m.schedule_file,
            }
            for m in result.mutants
        ],
        "caught_as_expected": [
            {
                **c.model_dump(mode="json", exclude={"first"}),
                "first": {"run_id": c.first.run_id, "schedule_file": c.first.schedule_file},
            }
            for c in result.caught_as_expected
        ],
        "metrics": campaign_metrics(result).model_dump(mode="json"),
    }


def _scenario_json(s: ScenarioCoverage) -> dict[str, Any]:
    return {
        "runs": s.runs,
        "violations": s.violations,
        "boundaries_discovered": {
            "count": len(s.boundaries_discovered),
            "labels": list(s.boundaries_discovered),
        },
        "boundaries_crashed": {
            "count": len(s.boundaries_crashed),
            "labels": list(s.boundaries_crashed),
        },
    }


def _violations_json(result: CampaignResult) -> list[dict[str, Any]]:
    """Each failed verdict of each violating run, smallest schedule first, with the schedule
    that replays it."""
    return [
        {**run_json(run), "checker": verdict.checker, "summary": verdict.summary,
         "evidence": list(verdict.evidence)}
        for run in smallest_first(result.violations)
        for verdict in run.verdicts
        if verdict.valid is False
    ]  # fmt: skip


def run_json(run: RunResult) -> dict[str, Any]:
    """Where a run is found, and what replays it."""
    return {
        "run_id": run.run_id,
        "scenario": run.scenario,
        "phase": run.kind,
        "label": run.label,
        "fault": fault_class(run.schedule),
        "schedule_file": run.schedule_file,
        "schedule": run.schedule.describe(),
    }


def groups_json(runs: Sequence[RunResult]) -> list[dict[str, Any]]:
    """The runs by class (`findings.violation_groups`), smallest first: each class's smallest
    run with its checker's summary, and how many more runs the class holds."""
    return [
        {
            "checker": group.checker,
            "fault": group.fault,
            "runs": len(group.runs),
            "smallest": {
                **run_json(group.smallest),
                "summary": next(
                    (v.summary for v in group.smallest.verdicts if v.checker == group.checker), ""
                ),
            },
            "more": len(group.runs) - 1,
        }
        for group in violation_groups(runs)
    ]


def phases_json(runs: Sequence[RunResult]) -> list[dict[str, Any]]:
    """Runs, violating and unknown runs per phase (run kind), in the order a campaign runs them."""
    return [dataclasses.asdict(count) for count in phase_counts(runs)]
