"""Violations and runs in doubt as the page shows them: grouped smallest first
(`findings.violation_groups`), each group's smallest run drawn in full, the rest named in a line;
and the verdict with its one-line reason.

A campaign of thousands of runs still makes a page of reasonable size this way: a timeline is
some 10 KB of SVG, so only the first groups' smallest runs get one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from killpoint.harness.findings import first_objection, smallest_first, violation_groups
from killpoint.harness.results import CampaignResult, RunResult, Verdict
from killpoint.reports.embedded import CarriedSchedule, carried, replay_for
from killpoint.reports.objectives_view import ObjectivesView
from killpoint.reports.queue import WAITING
from killpoint.reports.timeline import Timeline, build_timeline

MAX_EVIDENCE_LINES = 12
# Timelines drawn (some 10 KB of SVG each; a mutant's failing report must stay under 100 KB):
# the smallest run's of the first group of violations; on a page without violations, those of
# the first groups of runs in doubt. The other groups' runs have their replay commands.
TIMELINES = 1
DOUBT_TIMELINES = 2


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


def groups_of(
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
    groups = groups_of(unknown, lambda r, fault: f"{first_objection(r)} unknown after {fault}", 0)
    for status in WAITING:
        waiting = [r for r in doubted if r.valid is True and r.final_status == status]
        groups += groups_of(waiting, lambda r, fault: f"{r.final_status} after {fault}", 0)
    drawn = iter(range(timelines))
    return [
        replace(g, first=violation_view(g.first.run, True))
        if g.first.run.history is not None and next(drawn, None) is not None
        else g
        for g in groups
    ]


def listed_runs(groups: list[GroupView], objectives: list[ObjectivesView]) -> list[RunResult]:
    """The runs the page names, whose schedules its archive carries: every run of every group
    (a group's smallest drawn in full carries its own link besides) and each objective miss."""
    listed = [run for g in groups for run in (g.first.run, *(x.run for x in g.rest))]
    return listed + [miss.run for view in objectives for miss in view.misses]
