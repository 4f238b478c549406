"""Hunting a mutant: the campaign's plan, smallest schedules first, until the oracle objects.

A hunt runs the same runs a campaign would, reordered by schedule size across all its
scenarios: every clean run, then the seeds' named cases, then every single crash (the riskiest
crash points of every scenario before the next risk of any, see `harness.campaign.crash_risk`),
then every network fault, then every paired crash. It stops at the first run any checker (or a named
case's expected recovery) judges false. The order makes the failing schedule minimal by
construction: no smaller schedule in the plan was judged false before it. Nothing is random, so
the same hunt gives the same answer twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from killpoint.harness.campaign import Campaign, CampaignConfig, ranked_singles, recovery_points
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import MutantResult, RunKind, RunResult
from killpoint.harness.scenario import Expect, Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint


@dataclass(frozen=True)
class Planned:
    scenario: Scenario
    kind: RunKind
    schedule: FaultSchedule
    expect: Expect | None = None


@dataclass(frozen=True)
class HuntOutcome:
    result: MutantResult
    run: RunResult | None  # the first run judged false, with its schedule file
    runs: int  # how many runs the hunt made


class _Plan:
    """The campaign's plan as one lazy sequence, phase by phase over every scenario."""

    def __init__(self, campaign: Campaign, scenarios: Sequence[Scenario]) -> None:
        self.campaign = campaign
        self.scenarios = scenarios
        self.recordings: dict[str, History] = {}
        self.recoveries: dict[str, list[tuple[FaultSchedule, list[HitPoint]]]] = {}

    def runs(self) -> Iterator[Planned]:
        config = self.campaign.config
        for s in self.scenarios:
            yield Planned(s, "clean", FaultSchedule(scenario=s.name, run_id="clean"))
        if config.named:
            for s in self.scenarios:
                for case in self.campaign.named(s):
                    yield Planned(s, "named", case.schedule, case.expect)
        ranked = [
            (risk, i, k, s, schedule)
            for i, s in enumerate(self.scenarios)
            for k, (risk, _, schedule) in enumerate(ranked_singles(s.name, self.recordings[s.name]))
        ]
        for *_, s, schedule in sorted(ranked, key=lambda r: r[:3]):
            yield Planned(s, "single", schedule)
        if config.network:
            for s in self.scenarios:
                for schedule in self.campaign.network(s.name, self.recordings[s.name]):
                    yield Planned(s, "network", schedule)
        if config.interleave:
            for s in self.scenarios:
                pairs = self.campaign.interleavings(s.name, self.recoveries.get(s.name, []))
                for schedule in pairs:
                    yield Planned(s, "pair", schedule)
        if config.double:
            for s in self.scenarios:
                for schedule in self.campaign.doubles(s.name, self.recoveries.get(s.name, [])):
                    yield Planned(s, "double", schedule)

    def observe(self, planned: Planned, history: History) -> None:
        """What later phases need from a run: the recording, each single's recovery."""
        name = planned.scenario.name
        if planned.kind == "clean":
            self.recordings[name] = history
        elif planned.kind == "single":
            point = (planned.schedule, recovery_points(history))
            self.recoveries.setdefault(name, []).append(point)


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
        on_run=on_run,
    )
    campaign = Campaign(config)
    plan = _Plan(campaign, config.scenarios)
    runs = 0
    try:
        for planned in plan.runs():
            result, history = campaign.execute(
                planned.scenario, planned.schedule, planned.kind, planned.expect
            )
            runs += 1
            if result.valid is False:
                first = next(v for v in result.verdicts if v.valid is False)
                return HuntOutcome(
                    MutantResult(
                        mutant=spec.name,
                        description=description,
                        caught=True,
                        checker=first.checker,
                        runs_to_detection=runs,
                        schedule=result.schedule,
                    ),
                    result,
                    runs,
                )
            plan.observe(planned, history)
    finally:
        campaign.close()
    return HuntOutcome(
        MutantResult(mutant=spec.name, description=description, caught=False), None, runs
    )


def hunt(
    spec: EngineSpec, scenarios: Sequence[Scenario], world_dir: Path, seed: int = 0
) -> MutantResult:
    """Run the plan against `spec` until a run is judged false; the mutant's score."""
    return hunt_outcome(spec, scenarios, world_dir, seed).result
