"""Collect a campaign result into what the HTML page shows, so the template only lays it out.

Every decision about the page lives here and is testable without a browser: which tiles are red,
how each coverage cell is coloured, which runs get a detailed section (violations only, capped,
so a campaign of thousands of runs still makes a page of reasonable size) and how the rest are
aggregated.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from killpoint.harness.results import (
    CampaignResult,
    ExpectedCatch,
    MutantResult,
    RunResult,
    Verdict,
)
from killpoint.reports.charts import Chart, fmt, histogram, scatter
from killpoint.reports.deploys import DeployRow, deploy_rows
from killpoint.reports.embedded import CarriedSchedule, carried
from killpoint.reports.figures import percent
from killpoint.reports.metrics import CampaignMetrics, Distribution, Rate, campaign_metrics
from killpoint.reports.objectives_view import ObjectivesView, objective_views
from killpoint.reports.queue import QueueView, queue_view
from killpoint.reports.timeline import Timeline, build_timeline

MAX_DETAILED_VIOLATIONS = 25
MAX_EVIDENCE_LINES = 12
OPEN_CATCHES = 3  # up to this many caught engines are shown unfolded; more start folded
OUTCOME_CLASSES = ("ok", "violation", "needs_review", "other", "not_crashed")


@dataclass(frozen=True)
class Tile:
    id: str
    label: str
    value: str
    detail: str
    state: str  # "good" | "bad" | "warn" | "expected" | "neutral"


@dataclass(frozen=True)
class Cell:
    label: str
    outcome: str  # one of OUTCOME_CLASSES
    title: str


@dataclass(frozen=True)
class CoverageRow:
    scenario: str
    crashed: int
    discovered: int
    groups: list[list[Cell]]  # one list per boundary column, possibly empty


@dataclass(frozen=True)
class ViolationView:
    run: RunResult
    failed: list[Verdict]
    evidence: dict[str, list[str]]  # checker -> its smallest evidence, capped
    replay: str | None  # complete by itself; None when it could not be (see `replay_for`)
    own_module: bool  # its engine may be a module of the user's own (a mutant is ours)
    schedule: CarriedSchedule  # carried in the page: it replays wherever the page is opened
    timeline: Timeline | None


@dataclass(frozen=True)
class MutantView:
    result: MutantResult
    anchor: str  # the id of its details, which its table row links to
    caught_by: ViolationView | None  # the run that caught it (None: escaped, or not kept)
    open: bool


@dataclass(frozen=True)
class ExpectedView:
    catch: ExpectedCatch
    anchor: str
    first: ViolationView
    open: bool


@dataclass(frozen=True)
class Page:
    result: CampaignResult
    metrics: CampaignMetrics
    verdict: str  # "pass" | "fail" | "unknown"
    unjudged: int  # runs the oracle answered unknown for: why a page without violations is so
    campaign: bool  # it has runs of its own (else it is made of hunts or expected catches only)
    tiles: list[Tile]
    boundary_columns: list[str]
    coverage: list[CoverageRow]
    charts: list[Chart]
    violations: list[ViolationView]
    omitted_violations: int
    mutants: list[MutantView]
    caught_as_expected: list[ExpectedView]
    run_table: list[dict[str, Any]]
    violation_counts: list[tuple[str, str, int]]  # (scenario, checker, runs), all violations
    expected: dict[str, str]  # metric id -> why its figure is an expected outcome
    objectives: list[ObjectivesView]  # per scenario: declared RPO/RTO, and the runs missing them
    queue: QueueView  # the runs that ended waiting for a person
    deploys: list[DeployRow] = field(default_factory=list)  # per strategy (`reports.deploys`)


def _tile(tile_id: str, label: str, rate: Rate, good_when_all: bool, warn: bool = False) -> Tile:
    if rate.value is None:
        state = "neutral"
    elif good_when_all:
        state = "good" if rate.count == rate.of else "bad"
    else:
        state = "good" if rate.count == 0 else ("warn" if warn else "bad")
    return Tile(tile_id, label, percent(rate.value), f"{rate.count} of {rate.of}", state)


def _expected_share(count: int, expected: int, why: str) -> str | None:
    if count == 0:
        return None
    if expected == count:
        return f"expected: {why}"
    return f"{expected} of {count} expected ({why}); {count - expected} not passed by the oracle"


def expected_outcomes(metrics: CampaignMetrics) -> dict[str, str]:
    """Why a figure that looks like trouble is the engine doing its job, by tile/row id: a
    quarantined unsafe legacy checkpoint, a stop for review that the run's faults explain. Only
    runs the oracle passed count as expected; any other is said to be so."""
    notes = {
        "migration": _expected_share(
            metrics.runs_with_migration_failures,
            metrics.expected_migration_failures,
            "the unsafe legacy checkpoint was quarantined instead of resumed",
        ),
        "review": _expected_share(
            metrics.needs_review.count,
            metrics.expected_needs_review,
            "a fault left an effect's outcome unknowable, so the run stopped for a person",
        ),
    }
    return {key: text for key, text in notes.items() if text is not None}


def _review_tile(metrics: CampaignMetrics) -> Tile:
    tile = _tile("review", "needs review", metrics.needs_review, good_when_all=False, warn=True)
    rate = metrics.needs_review
    if rate.count and metrics.expected_needs_review == rate.count:
        return Tile(tile.id, tile.label, tile.value, f"{tile.detail}, all expected", "expected")
    return tile


def tiles(metrics: CampaignMetrics) -> list[Tile]:
    cov = metrics.coverage
    score = metrics.mutation_score
    return [
        Tile("runs", "runs", str(metrics.runs), "fault schedules executed", "neutral"),
        Tile(
            "violations",
            "violations",
            str(metrics.violations),
            "runs an invariant rejected",
            "bad" if metrics.violations else "good",
        ),
        _tile("resume", "resume success", metrics.resume_success, good_when_all=True),
        _tile("duplicates", "duplicate effects", metrics.duplicate_effects, good_when_all=False),
        _review_tile(metrics),
        _tile("budget", "resumes within budget", metrics.within_budget, good_when_all=True),
        _tile(
            "coverage",
            "boundaries crashed",
            Rate(count=cov.crashed, of=cov.discovered),
            good_when_all=True,
        ),
        _tile("mutation", "mutants caught", score, good_when_all=True)
        if score
        else Tile("mutation", "mutants caught", "n/a", "no mutants run", "neutral"),
    ]


def boundary_kind(label: str) -> str:
    """`charge:effect.prepared#2` -> `effect.prepared`: the column of the coverage matrix."""
    return label.rpartition(":")[2].split("#")[0]


def outcome_class(outcome: str | None) -> str:
    if outcome is None:
        return "not_crashed"
    return outcome if outcome in ("ok", "violation", "needs_review") else "other"


def coverage(result: CampaignResult) -> tuple[list[str], list[CoverageRow]]:
    columns: list[str] = []
    for s in result.scenarios:
        for label in s.boundaries_discovered:
            if boundary_kind(label) not in columns:
                columns.append(boundary_kind(label))
    rows = []
    for s in result.scenarios:
        groups: list[list[Cell]] = [[] for _ in columns]
        crashed = set(s.boundaries_crashed)
        for label in s.boundaries_discovered:
            outcome = s.outcome_by_boundary.get(label, "ok") if label in crashed else None
            groups[columns.index(boundary_kind(label))].append(
                Cell(label, outcome_class(outcome), f"{label}: {outcome or 'not crashed'}")
            )
        rows.append(
            CoverageRow(
                s.scenario,
                len(crashed & set(s.boundaries_discovered)),
                len(s.boundaries_discovered),
                groups,
            )
        )
    return columns, rows


def percentiles(dist: Distribution, unit: str = "") -> str | None:
    """`p50 60 s · p90 … · max 7,200 s`: a long tail's shape in one line, whatever the bins."""
    if not dist.values:
        return None
    marks = [("p50", dist.p50), ("p90", dist.p90), ("p99", dist.p99), ("max", dist.max)]
    return " · ".join(f"{name} {fmt(value or 0.0)}{unit}" for name, value in marks)


def _distribution(chart_id: str, title: str, dist: Distribution, x_label: str, unit: str) -> Chart:
    chart = histogram(chart_id, title, dist.values, x_label)
    return replace(chart, note=percentiles(dist, unit))


def charts(metrics: CampaignMetrics) -> list[Chart]:
    rt = metrics.recovery_time
    return [
        _distribution(
            "recovery-clock",
            "Recovery time (injected clock)",
            rt.clock_s,
            "seconds from first death to the end",
            " s",
        ),
        _distribution(
            "recovery-steps",
            "Recovery steps",
            rt.steps,
            "boundary hits from first death to the end",
            "",
        ),
        scatter("storage-growth", "Storage growth", metrics.storage.points, "steps", "store bytes"),
    ]


def violation_view(run: RunResult, with_timeline: bool, name_engine: bool = False) -> ViolationView:
    failed = [v for v in run.verdicts if v.valid is False]
    refs = [ref for v in failed for ref in v.refs]
    schedule = carried(run, name_engine)
    return ViolationView(
        run=run,
        failed=failed,
        evidence={v.checker: v.evidence[:MAX_EVIDENCE_LINES] for v in failed},
        replay=schedule.replay,
        own_module=not str(run.schedule.engine).startswith("mutant:"),
        schedule=schedule,
        timeline=build_timeline(run.history, refs) if with_timeline and run.history else None,
    )


def anchor(prefix: str, name: str) -> str:
    """An element id for `name` (an engine may be `module:factory`)."""
    return f"{prefix}-{re.sub(r'[^A-Za-z0-9_-]', '-', name)}"


def mutant_views(result: CampaignResult) -> list[MutantView]:
    """Each mutant with the run that caught it: evidence, replay command, the schedule the page
    carries and the timeline, so a reader sees how the oracle caught it and can rerun that."""
    caught = sum(m.run is not None for m in result.mutants)
    return [
        MutantView(
            result=m,
            anchor=anchor("mutant", m.mutant),
            caught_by=None if m.run is None else violation_view(m.run, True, True),
            open=caught <= OPEN_CATCHES,
        )
        for m in result.mutants
    ]


def expected_views(result: CampaignResult) -> list[ExpectedView]:
    catches = result.caught_as_expected
    return [
        ExpectedView(
            catch=c,
            anchor=anchor("expected", str(i)),
            first=violation_view(c.first, True, True),
            open=len(catches) <= OPEN_CATCHES,
        )
        for i, c in enumerate(catches, 1)
    ]


def verdict_of(result: CampaignResult) -> str:
    """fail on a violation or an escaped mutant (what makes `killpoint run` exit 1), else
    unknown if any run could not be judged, else pass. What a test caught as expected is
    neither."""
    if result.violations or any(not m.caught for m in result.mutants):
        return "fail"
    return "unknown" if any(r.valid == "unknown" for r in result.runs) else "pass"


def run_table(result: CampaignResult) -> list[dict[str, Any]]:
    """Runs aggregated per (scenario, kind): how many, and how they ended."""
    table: dict[tuple[str, str], Counter[str]] = {}
    for run in result.runs:
        counts = table.setdefault((run.scenario, run.kind), Counter())
        counts["runs"] += 1
        counts["valid" if run.valid is True else str(run.valid).lower()] += 1
        counts["needs_review"] += run.final_status == "needs_review"
    return [{"scenario": s, "kind": k, **c} for (s, k), c in table.items()]


def build_page(result: CampaignResult) -> Page:
    """The page of `result`, carrying the schedules it shows (`reports.embedded`)."""
    metrics = campaign_metrics(result)
    violating = result.violations
    columns, rows = coverage(result)
    return Page(
        result=result,
        metrics=metrics,
        verdict=verdict_of(result),
        unjudged=sum(r.valid == "unknown" for r in result.runs),
        campaign=bool(result.runs or result.scenarios)
        or not (result.mutants or result.caught_as_expected),
        tiles=tiles(metrics),
        boundary_columns=columns,
        coverage=rows,
        charts=charts(metrics),
        violations=[violation_view(r, True) for r in violating[:MAX_DETAILED_VIOLATIONS]],
        omitted_violations=max(0, len(violating) - MAX_DETAILED_VIOLATIONS),
        mutants=mutant_views(result),
        caught_as_expected=expected_views(result),
        run_table=run_table(result),
        violation_counts=[
            (s, c, n)
            for (s, c), n in Counter(
                (r.scenario, v.checker) for r in violating for v in r.verdicts if v.valid is False
            ).most_common()
        ],
        expected=expected_outcomes(metrics),
        objectives=objective_views(result, metrics.objectives),
        deploys=deploy_rows(result),
        queue=queue_view(result),
    )
