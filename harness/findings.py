"""What a reader of a campaign wants first: its smallest counterexamples, grouped, and counts per
phase.

Every place that shows violations (the console, the JSON summary, the report) orders and groups
them here, so they agree. A violation's *class* is the checker that objected first and the kind
of the last fault before it (a crash's boundary without its step, a network rule, two workers…):
runs of one class are usually one bug met by many schedules, and the smallest schedule of a class
is the one to read and replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from killpoint.harness.results import CampaignResult, RunResult
from killpoint.harness.schedule import FaultSchedule

# the campaign's phases in the order a campaign runs them; a kind outside this list comes last
PHASES = (
    "clean",
    "single",
    "double",
    "network",
    "named",
    "pair",
    "real",
    "deploy",
    "generated",
    "replay",
)


def schedule_size(schedule: FaultSchedule) -> int:
    """How many faults the schedule injects: the measure of a counterexample's smallness."""
    return (
        len(schedule.crashes)
        + len(schedule.network.rules)
        + len(schedule.clock_jumps)
        + len(schedule.tamper)
        + len(schedule.deploys)
        + len(schedule.lies)
        + len(schedule.neighbours)
        + int(schedule.redeliver_start)
        + int(schedule.redeliver_after_end)
        + int(schedule.interleave is not None)
    )


def smallest_first(runs: Iterable[RunResult]) -> list[RunResult]:
    """Runs by schedule size, then by how many workers the schedule reaches, then by run id."""
    return sorted(runs, key=_size_key)


def _size_key(run: RunResult) -> tuple[int, int, str]:
    reach = max((c.worker for c in run.schedule.crashes), default=0)
    return (schedule_size(run.schedule), reach, run.run_id)


def first_objection(run: RunResult) -> str:
    """The checker that objected first (the oracle's order), or the run's verdict if none did."""
    for verdict in run.verdicts:
        if verdict.valid is False:
            return verdict.checker
    for verdict in run.verdicts:
        if verdict.valid == "unknown":
            return verdict.checker
    return ""


def fault_class(schedule: FaultSchedule) -> str:
    """The kind of the last fault the schedule injects, without the step it fell on."""
    if schedule.interleave is not None:
        return "two workers"
    if schedule.crashes:
        return schedule.crashes[-1].boundary
    if schedule.network.rules:
        rule = schedule.network.rules[-1]
        return f"{rule.service}.{rule.operation or '*'}:{rule.mode}"
    if schedule.tamper:
        return f"tamper:{schedule.tamper[-1].kind}"
    if schedule.lies:
        return schedule.lies[-1].label()
    for present, name in (
        (schedule.deploys, "deploy"),
        (schedule.neighbours, "neighbour"),
        (schedule.clock_jumps, "clock jump"),
    ):
        if present:
            return name
    if schedule.redeliver_start or schedule.redeliver_after_end:
        return "redelivery"
    return "no faults"


@dataclass(frozen=True)
class ViolationGroup:
    """Runs one checker objected to after the same kind of fault, smallest schedule first."""

    checker: str
    fault: str
    runs: tuple[RunResult, ...]

    @property
    def smallest(self) -> RunResult:
        return self.runs[0]


def violation_groups(runs: Iterable[RunResult]) -> list[ViolationGroup]:
    """Group runs by (first objecting checker, fault class); groups ordered by their smallest
    run, so the first group holds the campaign's smallest counterexample."""
    grouped: dict[tuple[str, str], list[RunResult]] = {}
    for run in smallest_first(runs):
        grouped.setdefault((first_objection(run), fault_class(run.schedule)), []).append(run)
    groups = [ViolationGroup(c, f, tuple(rs)) for (c, f), rs in grouped.items()]
    return sorted(groups, key=lambda g: _size_key(g.smallest))


@dataclass(frozen=True)
class PhaseCount:
    """One phase of a campaign (a run kind): how many runs, how many violating, how many
    unknown."""

    phase: str
    runs: int
    violating: int
    unknown: int


def phase_counts(runs: Sequence[RunResult] | CampaignResult) -> list[PhaseCount]:
    """Counts per phase, in the order a campaign runs its phases; phases with no runs left out."""
    listed = runs.runs if isinstance(runs, CampaignResult) else runs
    counts: dict[str, list[int]] = {}
    for run in listed:
        count = counts.setdefault(run.kind, [0, 0, 0])
        count[0] += 1
        count[1] += run.valid is False
        count[2] += run.valid == "unknown"
    order = {phase: i for i, phase in enumerate(PHASES)}
    return [
        PhaseCount(phase, *count)
        for phase, count in sorted(counts.items(), key=lambda kv: (order.get(kv[0], 99), kv[0]))
    ]
