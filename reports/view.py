"""Collect a campaign result into what the HTML page shows, so the template only lays it out.

Every decision about the page lives here and is testable without a browser: which tiles are red,
how each coverage cell is coloured, the verdict and its one-line reason, which runs get a
detailed section (the smallest run of each group of violations, and of runs in doubt; the rest
of a group listed in a line each, so a campaign of thousands of runs still makes a page of
reasonable size) and the per-run table's rows.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from killpoint.harness.findings import (
    PhaseCount,
    first_objection,
    phase_counts,
    smallest_first,
    violation_groups,
)
from killpoint.harness.results import (
    CampaignResult,
    ExpectedCatch,
    MutantResult,
    RunResult,
    Verdict,
)
from killpoint.reports.charts import Chart, fmt, histogram, scatter
from killpoint.reports.deploys import DeployRow, deploy_rows
from killpoint.reports.embedded import CarriedArchive, CarriedSchedule, archive, carried, replay_for
from killpoint.reports.figures import percent
from killpoint.reports.metrics import CampaignMetrics, Distribution, Rate, campaign_metrics
from killpoint.reports.objectives_view import ObjectivesView, objective_views
from killpoint.reports.queue import WAITING, QueueView, queue_view
from killpoint.reports.timeline import Timeline, build_timeline

MAX_EVIDENCE_LINES = 12
# Timelines drawn (some 10 KB of SVG each; a mutant's failing report must stay under 100 KB):
# the smallest run's of the first group of violations; on a page without violations, those of
# the first groups of runs in doubt. The other groups' runs have their replay commands.
TIMELINES = 1
DOUBT_TIMELINES = 2
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
class ViolationView:
    run: RunResult
    failed: list[Verdict]
    evidence: dict[str, list[str]]  # checker -> its smallest evidence, capped
    replay: str | None  # complete by itself; None when it could not be (see `replay_for`)
    own_module: bool  # its engine may be a module of the user's own (a mutant is ours)
    schedule: CarriedSchedule  # carried in the page: it replays wherever the page is opened
    timeline: Timeline | None


@dataclass(frozen=True)
class Listed:
    """A run named in a line: a group's other runs, beside the one drawn in full. Its schedule
    is in the page's archive (`Page.archive`), under the name its command gives."""

    run: RunResult
    reason: str
    replay: str | None  # `killpoint replay NAME.json`, in the folder the archive is unpacked in


@dataclass(frozen=True)
class GroupView:
    """One group of runs (`findings.violation_groups`): its smallest run in full, the rest
    listed."""

    title: str  # "single_effect after effect.started", "needs_review after two workers"
    first: ViolationView
    reason: str  # the first run's: why it is in the group
    rest: list[Listed]

    @property
    def size(self) -> int:
        return 1 + len(self.rest)


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


def violation_view(run: RunResult, with_timeline: bool, name_engine: bool = False) -> ViolationView:
    # what objected, or for a run in doubt what could not judge
    failed = [v for v in run.verdicts if v.valid is False] or [
        v for v in run.verdicts if v.valid == "unknown"
    ]
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


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _checkers(runs: list[RunResult]) -> str:
    """`single_effect`, or `single_effect 30, progress 7`: who objected first, how often."""
    counted = Counter(first_objection(r) for r in runs).most_common()
    if len(counted) == 1:
        return counted[0][0]
    return ", ".join(f"{checker} {n}" for checker, n in counted)


def verdict_reason(result: CampaignResult) -> str:
    """The verdict in one line: what fails the campaign and its smallest counterexample, what
    could not be judged, or that every run passed."""
    bad = result.violations
    escaped = [m.mutant for m in result.mutants if not m.caught]
    unknown = [r for r in result.runs if r.valid == "unknown"]
    if bad:
        smallest = smallest_first(bad)[0]
        verb = "violates" if len(bad) == 1 else "violate"
        return (
            f"{_plural(len(bad), 'run')} {verb} {_checkers(bad)} — smallest: "
            f"{smallest.label} ({smallest.scenario}, run {smallest.run_id})"
        )
    if escaped:
        return f"{_plural(len(escaped), 'mutant')} escaped: {', '.join(escaped)}"
    if unknown:
        return (
            f"no violation; {_plural(len(unknown), 'run')} could not be judged "
            f"({_checkers(unknown)}), so the CLI exits 0 and nothing is called passed"
        )
    return f"{_plural(len(result.runs), 'run')}, none violating, none unjudged"


def _why(run: RunResult) -> str:
    """Why a run is listed: its failed (else unknown) verdicts' summaries, or how it stopped."""
    for valid in (False, "unknown"):
        said = [f"{v.checker}: {v.summary}" for v in run.verdicts if v.valid == valid]
        if said:
            return "; ".join(said)
    return f"{run.final_status}: {run.final_reason}".rstrip(": ")


def _groups(
    runs: list[RunResult], title: Callable[[RunResult, str], str], timelines: int
) -> list[GroupView]:
    """`runs` grouped (`findings.violation_groups`), the first `timelines` groups' smallest
    runs with their timeline drawn: some 10 KB of SVG each. Each smallest run carries its
    schedule; the others are listed, their schedules in the page's archive."""
    return [
        GroupView(
            title=title(g.smallest, g.fault),
            first=violation_view(g.smallest, n < timelines),
            reason=_why(g.smallest),
            rest=[Listed(r, _why(r), replay_for(r)) for r in g.runs[1:]],
        )
        for n, g in enumerate(violation_groups(runs))
    ]


def doubted_runs(result: CampaignResult) -> list[RunResult]:
    """The runs it doubts: judged unknown, or (not violating) ended waiting for a person."""
    return [
        r
        for r in result.runs
        if r.valid == "unknown" or (r.valid is True and r.final_status in WAITING)
    ]


def doubt_groups(result: CampaignResult, timelines: int = DOUBT_TIMELINES) -> list[GroupView]:
    """The runs in doubt grouped as violations are: unknown ones by the checker that could not
    judge, waiting ones by how they ended, each after the kind of the last fault; the first
    `timelines` groups whose smallest run kept its history with its timeline drawn."""
    doubted = doubted_runs(result)
    unknown = [r for r in doubted if r.valid == "unknown"]
    groups = _groups(unknown, lambda r, fault: f"{first_objection(r)} unknown after {fault}", 0)
    for status in WAITING:
        waiting = [r for r in doubted if r.valid is True and r.final_status == status]
        groups += _groups(waiting, lambda r, fault: f"{r.final_status} after {fault}", 0)
    drawn = iter(range(timelines))
    return [
        replace(g, first=violation_view(g.first.run, True))
        if g.first.run.history is not None and next(drawn, None) is not None
        else g
        for g in groups
    ]


ROW_FIELDS = (
    "run",
    "scenario",
    "phase",
    "verdict",
    "checker",
    "status",
    "workers",
    "deaths",
    "seconds",
)


def run_rows(result: CampaignResult) -> str:
    """Every run as a row of the per-run table, as compact JSON the page's script draws, one
    column per field (`ROW_FIELDS`): `{"fields": …, "values": {field: [names]}, "columns":
    {field: …}}`. A name repeated in every row is given once and referred to by its place; a
    column of small numbers (places, workers, deaths: all under 36) is a string of base-36
    digits, one a run; seconds are in hundredths. A campaign of 5,000 runs makes some 130 KB
    of it; as table markup, some 900 KB."""
    names: dict[str, dict[str, int]] = {f: {} for f in ROW_FIELDS[1:6]}

    def ref(field: str, value: str) -> int:
        return names[field].setdefault(value, len(names[field]))

    columns: dict[str, list[Any]] = {f: [] for f in ROW_FIELDS}
    for r in result.runs:
        verdict = "valid" if r.valid is True else "violation" if r.valid is False else "unknown"
        wall = r.measures.wall_s
        for field_name, value in zip(
            ROW_FIELDS,
            (
                r.run_id,
                ref("scenario", r.scenario),
                ref("phase", r.kind),
                ref("verdict", verdict),
                ref("checker", first_objection(r) if r.valid is not True else ""),
                ref("status", r.final_status),
                r.measures.workers,
                r.measures.deaths,
                None if wall is None else round(wall * 100),
            ),
            strict=True,
        ):
            columns[field_name].append(value)
    packed = {f: _digits(column) if f in SMALL else column for f, column in columns.items()}
    values = {field: list(seen) for field, seen in names.items()}
    data = {"fields": ROW_FIELDS, "values": values, "columns": packed}
    # safe inside <script>: no "</" can close it early
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


SMALL = frozenset(ROW_FIELDS[1:8])  # the columns of places and counts


def _digits(column: list[int]) -> str | list[int]:
    """`[0, 2, 11]` as `"02b"`, one base-36 digit a run; the list itself when one is 36 or
    more."""
    if any(not 0 <= n < 36 for n in column):
        return column
    return "".join("0123456789abcdefghijklmnopqrstuvwxyz"[n] for n in column)


def run_table(result: CampaignResult) -> list[dict[str, Any]]:
    """Runs aggregated per (scenario, kind): how many, and how they ended."""
    table: dict[tuple[str, str], Counter[str]] = {}
    for run in result.runs:
        counts = table.setdefault((run.scenario, run.kind), Counter())
        counts["runs"] += 1
        counts["valid" if run.valid is True else str(run.valid).lower()] += 1
        counts["needs_review"] += run.final_status == "needs_review"
    return [{"scenario": s, "kind": k, **c} for (s, k), c in table.items()]


def _listed_runs(groups: list[GroupView], objectives: list[ObjectivesView]) -> list[RunResult]:
    """The runs the page names, whose schedules its archive carries: every run of every group
    (a group's smallest drawn in full carries its own link besides) and each objective miss."""
    listed = [run for g in groups for run in (g.first.run, *(x.run for x in g.rest))]
    return listed + [miss.run for view in objectives for miss in view.misses]


def build_page(result: CampaignResult) -> Page:
    """The page of `result`, carrying the schedules it shows (`reports.embedded`)."""
    metrics = campaign_metrics(result)
    violating = result.violations
    columns, rows = coverage(result)
    groups = _groups(violating, lambda r, fault: f"{first_objection(r)} after {fault}", TIMELINES)
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
        archive=archive(_listed_runs(groups + doubts, objectives)),
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
