"""Hunting a mutant: the campaign's plan, smallest schedules first, until the oracle objects.

A hunt runs the same runs a campaign would, reordered by schedule size across all its
scenarios (`harness.plan.Plan.smallest_first`): every clean run, then the named cases, then
every single crash (the riskiest crash points of every scenario before the next risk of any),
then every network fault, then the exploration's generated schedules (`harness.explore`, its
violation shrunk), then every paired worker and paired crash. The exploration comes before the
pairs, not after the whole plan, because the pairs are most of the plan's runs: a mistake only
a generated schedule shows would wait for all of them. It stops at the first run
any checker (or a named case's expected recovery) judges false. The order makes the failing
schedule minimal by construction: no smaller schedule in the plan was judged false before it.
Nothing is random, so the same hunt gives the same answer twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from killpoint.harness.campaign import Campaign, CampaignConfig, exploration
from killpoint.harness.options import EXPLORE
from killpoint.harness.plan import Plan
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import MutantResult, RunResult
from killpoint.harness.scenario import Scenario


@dataclass(frozen=True)
class HuntOutcome:
    result: MutantResult
    run: RunResult | None  # the first run judged false, with its schedule file
    runs: int  # how many runs the hunt made


def hunt_outcome(
    spec: EngineSpec,
    scenarios: Sequence[Scenario],
    world_dir: Path,
    seed: int = 0,
    *,
    description: str = "",
    double_limit: int = 150,
    on_run: Callable[[RunResult], None] | None = None,
    double: bool = True,
    interleave: bool = True,
    network: bool = True,
    explore: str = EXPLORE,
) -> HuntOutcome:
    """Hunt `spec` over `scenarios` in a world of its own under `world_dir`; the flags drop
    whole phases of the plan, as they do for a campaign."""
    config = CampaignConfig(
        scenarios=list(scenarios),
        workdir=Path(world_dir),
        engine=spec,
        seed=seed,
        double=double,
        double_limit=double_limit,
        interleave=interleave,
        network=network,
        explore=explore,
        on_run=on_run,
    )
    plan = Plan(config.scenarios, config.plan_options())
    runs = 0
    with Campaign(config) as campaign:
        for planned in plan.shallow():
            result, history = campaign.execute_planned(planned)
            runs += 1
            if result.valid is False:
                return _caught(spec, description, result, runs)
            plan.observe(planned, history)
        for search in exploration(campaign, plan, config.scenarios):
            for result in search.run():
                campaign.keep(result)
                if result.valid is False:
                    return _caught(
                        spec, description, result, runs + (search.first_violation_at or 0)
                    )
            runs += search.runs
        for planned in plan.paired():
            result, history = campaign.execute_planned(planned)
            runs += 1
            if result.valid is False:
                return _caught(spec, description, result, runs)
    return HuntOutcome(
        MutantResult(mutant=spec.name, description=description, caught=False), None, runs
    )


def _caught(spec: EngineSpec, description: str, result: RunResult, runs: int) -> HuntOutcome:
    first = next(v for v in result.verdicts if v.valid is False)
    caught = MutantResult(
        mutant=spec.name,
        description=description,
        caught=True,
        checker=first.checker,
        runs_to_detection=runs,
        schedule=result.schedule,
    )
    return HuntOutcome(caught, result, runs)


def hunt(
    spec: EngineSpec, scenarios: Sequence[Scenario], world_dir: Path, seed: int = 0
) -> MutantResult:
    """Run the plan against `spec` until a run is judged false; the mutant's score."""
    return hunt_outcome(spec, scenarios, world_dir, seed).result
