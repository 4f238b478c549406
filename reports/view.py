"""Collect a campaign result into what the HTML page shows, so the template only lays it out.

Every decision about the page lives here or beside it and is testable without a browser: which
tiles are red, how each coverage cell is coloured, the charts, the mutants' catches; the groups of
violations and runs in doubt and the verdict's reason (`reports.groups`); the per-run table's rows
(`reports.run_rows`); the schedules the page carries (`reports.embedded`).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from killpoint.harness.findings import (
    PhaseCount,
    first_objection,
    phase_counts,
)
from killpoint.harness.results import (
    CampaignResult,
    ExpectedCatch,
    MutantResult,
)
from killpoint.reports.charts import Chart, fmt, histogram, scatter
from killpoint.reports.deploys import DeployRow, deploy_rows
from killpoint.reports.embedded import CarriedArchive, archive
from killpoint.reports.figures import percent
from killpoint.reports.groups import (
    DOUBT_TIMELINES,
    TIMELINES,
    GroupView,
    ViolationView,
    doubt_groups,
    doubted_runs,
    groups_of,
    listed_runs,
    verdict_of,
    verdict_reason,
    violation_view,
)
from killpoint.reports.metrics import CampaignMetrics, Distribution, Rate, campaign_metrics
from killpoint.reports.objectives_view import ObjectivesView, objective_views
from killpoint.reports.queue import QueueView, queue_view
from killpoint.reports.run_rows import run_rows, run_table

OPEN_CATCHES = 3  # up to this many caught engines are shown unfolded; more start folded
OUTCOME_CLASSES = ("ok", "violation", "needs_review", "other", "not_crashed")


@dataclass(frozen=True)
class Tile:
    id: str
    label: str
    value: str
    detail: str
    state: str  # "good" | "bad" | "warn" | "expected" | "neutral"
    key: str = ""  # its definition's key (`reports.definitions`)


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
    mutants: list[MutantView]
    caught_as_expected: list[ExpectedView]
    run_table: list[dict[str, Any]]
    phases: list[PhaseCount]
    reason: str  # the verdict's one line
    groups: list[GroupView]  # the violations, smallest first, grouped
    doubts: list[GroupView]  # the runs in doubt (unknown, or waiting for a person), grouped
    doubted: int  # how many runs are in doubt
    archive: CarriedArchive | None  # the schedules of the runs the groups list in a line
    run_rows: str  # every run, as compact JSON for the filterable table (`run_rows`)
    command: str  # the command line that launched the campaign, quoted as a shell would
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


# the definitions printed beside their figures in the metrics table; the rest in a list
IN_TABLE = frozenset(
    {
        "resume_success",
        "duplicate_effects",
        "unresolved_effect_age_s",
        "recovery_time_clock",
        "recovery_time_wall",
        "recovery_steps",
        "checkpoints_per_successful_run",
        "storage_per_workflow",
        "storage_per_step",
        "migration_failures",
        "manual_intervention",
        "needs_review",
        "within_budget",
    }
)
# each tile's definition, where its id is not its key
TILE_KEYS = {
    "resume": "resume_success",
    "duplicates": "duplicate_effects",
    "review": "needs_review",
    "budget": "within_budget",
    "mutation": "mutation_score",
}


def tiles(metrics: CampaignMetrics) -> list[Tile]:
    """The summary's tiles, each with its definition's key."""
    return [replace(t, key=TILE_KEYS.get(t.id, t.id)) for t in _tiles(metrics)]


def _tiles(metrics: CampaignMetrics) -> list[Tile]:
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


def build_page(result: CampaignResult) -> Page:
    """The page of `result`, carrying the schedules it shows (`reports.embedded`)."""
    metrics = campaign_metrics(result)
    violating = result.violations
    columns, rows = coverage(result)
    groups = groups_of(violating, lambda r, fault: f"{first_objection(r)} after {fault}", TIMELINES)
    doubts = doubt_groups(result, 0 if violating else DOUBT_TIMELINES)
    objectives = objective_views(result, metrics.objectives)
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
        mutants=mutant_views(result),
        caught_as_expected=expected_views(result),
        run_table=run_table(result),
        phases=phase_counts(result),
        reason=verdict_reason(result),
        groups=groups,
        doubts=doubts,
        doubted=len(doubted_runs(result)),
        archive=archive(listed_runs(groups + doubts, objectives)),
        run_rows=run_rows(result),
        command=shlex.join(result.command or ()),
        violation_counts=[
            (s, c, n)
            for (s, c), n in Counter(
                (r.scenario, v.checker) for r in violating for v in r.verdicts if v.valid is False
            ).most_common()
        ],
        expected=expected_outcomes(metrics),
        objectives=objectives,
        deploys=deploy_rows(result),
        queue=queue_view(result),
    )
