"""Hunting a mutant: the campaign's plan, smallest schedules first, until the oracle objects.

A hunt runs the same runs a campaign would, reordered by schedule size across all its
scenarios (`plan.Plan.smallest_first`): every clean run, then the named cases, then
each operator control on the stops they reached (`operators`), then every single crash
(the riskiest crash points of every scenario before the next risk of any), then every network
fault, then the real-tier pass (`real_pass`: a few of the singles' deaths by SIGKILL,
after the in-process runs that catch most mutants at a quarter of the cost), then two workers
with the first paused right after an effect's `started` (few, where no store fence helps), then
a first pass of the exploration's generated schedules (`explore`, a violation shrunk),
then every other paired worker and paired crash, then the rest of the exploration
(`FIRST_PASS` says why it is split), then the operators again, on the exploration's stops too,
with crashes in and after each control. It stops at the first run any checker (or a named
case's expected recovery) judges false. The order makes the failing schedule minimal by
construction: no smaller schedule in the plan was judged false before it.
Nothing is random, so the same hunt gives the same answer twice.

A hunt of a team's own engine (`engine_hunt`, `killpoint hunt`) goes on in the same order past
its first finding, to the end of the plan: one engine shows several mistakes, each the smallest
of its class (`findings.violation_groups`), where a mutant holds one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.explore import Budget
from killpoint.harness.campaign.operators import searches as operator_searches
from killpoint.harness.campaign.plan import Plan, PlannedRun
from killpoint.harness.campaign.searches import exploration
from killpoint.harness.options import CampaignOptions, declared
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import MutantResult, RunResult
from killpoint.harness.scenario import Scenario

# The share of the exploration a hunt makes before the pairs and doubles: a mistake only a
# generated schedule shows is found without waiting for the pairs (most of the plan's runs),
# and one the pairs show does not wait for the whole exploration; the rest comes last.
FIRST_PASS = 0.5
# the controls a hunt applies early, right after the named cases: those that act on an effect in
# doubt (ask about it, send it again), on the stops that hold one; the rest comes last
EARLY = ("reconcile", "retry")
DEFAULTS = CampaignOptions()  # the main job's


@dataclass(frozen=True)
class HuntOutcome:
    result: MutantResult
    run: RunResult | None  # the first run judged false, with its schedule file
    runs: int  # how many runs the hunt made


# The options a hunt honours: those offered on the `mutants` front. The others keep their
# defaults: a hunt runs in-process, in a store of its own, whole (no shard), with its named cases,
# deploys and worker timeout as the main job's, whatever the campaign beside it was asked.
HUNTED = frozenset(spec.name for spec in declared(CampaignOptions, "mutants"))


def hunt_config(
    spec: EngineSpec,
    scenarios: Sequence[Scenario],
    world_dir: Path,
    options: CampaignOptions,
    on_run: Callable[[RunResult], None] | None = None,
) -> CampaignConfig:
    """The campaign a hunt of `spec` draws its runs from: `options`' phases (`HUNTED`)."""
    hunted = CampaignOptions().merged({name: getattr(options, name) for name in HUNTED})
    return CampaignConfig.of(hunted, scenarios, world_dir, spec, on_run)


def hunt_outcome(
    spec: EngineSpec,
    scenarios: Sequence[Scenario],
    world_dir: Path,
    options: CampaignOptions = DEFAULTS,
    *,
    description: str = "",
    on_run: Callable[[RunResult], None] | None = None,
) -> HuntOutcome:
    """Hunt `spec` over `scenarios` in a world of its own under `world_dir`; the options drop
    whole phases of the plan, as they do for a campaign (`hunt_config`)."""
    started, made = time.perf_counter(), 0
    with closing(_hunt(spec, scenarios, world_dir, options, on_run)) as hunted:
        for result, made in hunted:
            if result.valid is False:
                return _caught(spec, description, result, made, time.perf_counter() - started)
    return HuntOutcome(
        MutantResult(mutant=spec.name, description=description, caught=False), None, made
    )


@dataclass(frozen=True)
class EngineHunt:
    """A hunt of a team's own engine: every run it made, in the hunt's order."""

    engine: str
    runs: tuple[RunResult, ...]
    seconds: float
    whole: bool  # the whole plan was made (False: it stopped at its first finding)


def engine_hunt(
    spec: EngineSpec,
    scenarios: Sequence[Scenario],
    world_dir: Path,
    options: CampaignOptions = DEFAULTS,
    *,
    first: bool = False,
    on_run: Callable[[RunResult], None] | None = None,
) -> EngineHunt:
    """Hunt `spec` to the end of the plan (or, with `first`, to its first run judged false):
    every run is kept, so each class of violation has its smallest schedule among them."""
    started, runs, stopped = time.perf_counter(), [], False
    with closing(_hunt(spec, scenarios, world_dir, options, on_run)) as hunted:
        for result, _ in hunted:
            runs.append(result)
            stopped = first and result.valid is False
            if stopped:
                break
    return EngineHunt(spec.name, tuple(runs), time.perf_counter() - started, whole=not stopped)


def _hunt(
    spec: EngineSpec,
    scenarios: Sequence[Scenario],
    world_dir: Path,
    options: CampaignOptions,
    on_run: Callable[[RunResult], None] | None,
) -> Generator[tuple[RunResult, int]]:
    """The hunt's runs in its order (`_hunted`), in a campaign closed when they stop."""
    config = hunt_config(spec, scenarios, world_dir, options, on_run)
    plan = Plan(config.scenarios, config.plan_options())
    with Campaign(config) as campaign:
        yield from _hunted(campaign, plan, Budget.parse(config.explore), [0])


def _hunted(
    campaign: Campaign, plan: Plan, budget: Budget, made: list[int]
) -> Iterator[tuple[RunResult, int]]:
    """Each run of a hunt in its order, with the runs made up to it (`made[0]`, kept up to
    date): the plan's shallow part, the real-tier pass, a first pass of exploration, the pairs
    and doubles, the rest of the exploration."""
    first, rest = budget.split(FIRST_PASS)
    operated = False
    for planned in plan.shallow():
        if planned.kind not in ("clean", "named") and not operated:
            operated = True  # the named cases are in: each control on their stops
            yield from _operated(campaign, made, crashes=False, explored=False, only=EARLY)
        result, history = campaign.execute_planned(planned)
        made[0] += 1
        yield result, made[0]
        plan.observe(planned, history)
    if not operated:
        yield from _operated(campaign, made, crashes=False, explored=False, only=EARLY)
    yield from _real(campaign, plan, made)  # a few of the singles' deaths again, real ones
    yield from _planned(campaign, plan.stale_starts(), made)
    yield from _explored(campaign, plan, first, 0, made)
    yield from _planned(campaign, plan.paired(), made)
    yield from _explored(campaign, plan, rest, 1, made)
    yield from _operated(campaign, made, crashes=True, explored=True)


def _real(campaign: Campaign, plan: Plan, made: list[int]) -> Iterator[tuple[RunResult, int]]:
    """The real-tier pass (`real_pass`) over every scenario, in turn."""
    for scenario in campaign.config.scenarios:
        yield from _planned(
            campaign, campaign.real_runs(scenario, plan.recordings[scenario.name]), made
        )


def _planned(
    campaign: Campaign, runs: Iterable[PlannedRun], made: list[int]
) -> Iterator[tuple[RunResult, int]]:
    for planned in runs:
        result, _ = campaign.execute_planned(planned)
        made[0] += 1
        yield result, made[0]


def _operated(
    campaign: Campaign,
    made: list[int],
    *,
    crashes: bool,
    explored: bool,
    only: tuple[str, ...] | None = None,
) -> Iterator[tuple[RunResult, int]]:
    """The operators' runs (`operators`): early, the controls that act on an effect in
    doubt, on the recordings' and named cases' stops with one; last, every control on the
    exploration's stops too, with crashes in and after each."""
    label = "" if not crashes else "b"
    for search in operator_searches(
        campaign,
        campaign.config.scenarios,
        crashes=crashes,
        explored=explored,
        only=only,
        label=label,
    ):
        for result in search.run():
            campaign.keep(result)
            made[0] += 1
            yield result, made[0]


def _explored(
    campaign: Campaign, plan: Plan, budget: Budget, part: int, made: list[int]
) -> Iterator[tuple[RunResult, int]]:
    for search in exploration(campaign, plan, campaign.config.scenarios, budget, part, hunt=True):
        for result in search.run():
            campaign.keep(result)
            yield result, made[0] + (search.first_violation_at or search.runs)
        made[0] += search.runs


def _caught(
    spec: EngineSpec, description: str, result: RunResult, runs: int, seconds: float
) -> HuntOutcome:
    first = next(v for v in result.verdicts if v.valid is False)
    caught = MutantResult(
        mutant=spec.name,
        description=description,
        caught=True,
        checker=first.checker,
        runs_to_detection=runs,
        found_by="exploration" if result.kind == "generated" else "plan",
        seconds_to_detection=round(seconds, 2),
        schedule=result.schedule,
        run=result,  # its schedule file and history: the report's replay command and timeline
    )
    return HuntOutcome(caught, result, runs)


def hunt(
    spec: EngineSpec, scenarios: Sequence[Scenario], world_dir: Path, seed: int = 0
) -> MutantResult:
    """Run the plan against `spec` until a run is judged false; the mutant's score."""
    return hunt_outcome(spec, scenarios, world_dir, CampaignOptions(seed=seed)).result
