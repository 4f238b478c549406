"""Campaigns: the plan's runs, executed and judged, with what they covered.

For each scenario the plan (`plan`) says what to run: a recording without faults, one
single crash per boundary hit it discovered (the riskiest first), two workers and a second
crash in each single's recovery, each network fault mode on each mutating request, the named
cases. The campaign runs each in its world, tells the plan what it showed, judges it by the
oracle (and a named case by its expected recovery too), and counts which boundaries it crashed.
Every run ends with a fault-free recovery to a terminal state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from killpoint.harness.campaign.coverage import covered, with_generated
from killpoint.harness.campaign.explore import Exploration
from killpoint.harness.campaign.kept import KeptHistories, in_doubt
from killpoint.harness.campaign.operators import OperatorSearch, Stop, remember
from killpoint.harness.campaign.operators import searches as operator_searches
from killpoint.harness.campaign.plan import Plan, PlannedRun, PlanOptions, clean, in_shard
from killpoint.harness.campaign.real_pass import real_pass, skipped
from killpoint.harness.campaign.searches import exploration
from killpoint.harness.checkers import check_all
from killpoint.harness.checkers.expectation import expectation as expectation
from killpoint.harness.checkers.measures import measure
from killpoint.harness.history import History
from killpoint.harness.objectives import measure_objectives
from killpoint.harness.operator import QUEUED
from killpoint.harness.options import EXPLORE, CampaignOptions
from killpoint.harness.protocol import ANY_WORKFLOW, SHARED_PROCESS, EngineSpec
from killpoint.harness.results import CampaignResult, RunKind, RunResult, ScenarioCoverage, combine
from killpoint.harness.run.tiers import open_world as open_world
from killpoint.harness.run.tiers import run_in_tier as run_in_tier
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Expect, Scenario
from killpoint.harness.schedule import FaultSchedule, Tier, save_schedule


@dataclass
class CampaignConfig:
    scenarios: Sequence[Scenario]
    workdir: Path
    engine: EngineSpec
    tier: Tier = "inprocess"
    store_url: str | None = None
    double: bool = True
    double_limit: int = 150  # per scenario; beyond it a seeded sample
    interleave: bool = True  # two workers recover each single crash (in-process tier only)
    network: bool = True
    named: bool = True  # the named cases each scenario of the campaign brings
    deploys: bool = True  # a deploy campaign around each scenario's runs in flight
    seed: int = 0
    shard: tuple[int, int] | None = None  # (i, n): this process runs every n-th run from i
    explore: str = EXPLORE  # `--explore RUNS|SECONDS`: generated schedules after the plan
    operators: bool = True  # each control on the runs faults stopped, under more faults
    worker_timeout: float = 120.0  # wall seconds before a worker counts as hung
    on_run: Callable[[RunResult], None] | None = None
    # how many runs the campaign (this shard) expects to make: told once the recordings are
    # in, and again as the plan unfolds and the exploration ends (progress's total)
    on_plan: Callable[[int], None] | None = None
    extra: Sequence[tuple[RunKind, FaultSchedule]] = field(default_factory=tuple)
    lies: bool = True  # start messages that lie, on a sample of singles and in exploration
    neighbours: bool = True  # a sample of runs beside neighbours (`neighbour_plan`)
    canaries: bool = True  # scan each run for the world's secrets (`secrets_kept`)
    pauses: bool = True  # pairs paused where a stale owner can still act (`plan.pauses`)
    real_pass: bool = True  # a few SIGKILLs at the riskiest boundaries (`real_pass`)

    @classmethod
    def of(
        cls,
        options: CampaignOptions,
        scenarios: Sequence[Scenario],
        workdir: Path,
        engine: EngineSpec,
        on_run: Callable[[RunResult], None] | None = None,
        on_plan: Callable[[int], None] | None = None,
    ) -> CampaignConfig:
        """The campaign `options` describe over `scenarios`, in `workdir`, against `engine`
        (the spec `options.engine` names, or one handed over as an object), telling its
        progress to `on_run` and `on_plan`: the one place a user's options become a config."""
        return cls(
            scenarios=list(scenarios),
            workdir=Path(workdir),
            engine=engine,
            tier=options.tier,
            store_url=options.db,
            double=options.double,
            double_limit=options.double_limit,
            interleave=options.interleave,
            network=options.network,
            named=options.named,
            deploys=options.deploys,
            seed=options.seed,
            explore=options.explore,
            operators=options.operators,
            shard=options.shard,
            worker_timeout=options.worker_timeout,
            lies=options.lies,
            canaries=options.canaries,
            real_pass=options.real_pass,
            on_run=on_run,
            on_plan=on_plan,
            neighbours=options.neighbours,
            pauses=options.pauses,
        )

    @property
    def real_pass_skipped(self) -> str | None:
        """Why this campaign makes no real-tier pass, or None when it makes one."""
        return skipped(self.engine, self.tier, self.real_pass)

    @property
    def pairs_in_process(self) -> bool:
        """Whether two of the engine's workers can share a process (DBOS: one per process)."""
        return SHARED_PROCESS not in self.engine.lacks

    @property
    def beside_neighbours(self) -> bool:
        """Whether runs get neighbours: asked, and the engine's workers run only the workflow
        they are given (`ANY_WORKFLOW`)."""
        return self.neighbours and ANY_WORKFLOW not in self.engine.lacks

    def plan_options(self) -> PlanOptions:
        return PlanOptions(
            tier=self.tier,
            seed=self.seed,
            double_limit=self.double_limit,
            double=self.double,
            interleave=self.interleave and (self.tier == "real") != self.pairs_in_process,
            network=self.network,
            named=self.named,
            # a deploy is judged by the versions the engine keeps: none, nothing to judge
            deploys=self.deploys and "versions" not in self.engine.lacks,
            real_pairs=not self.pairs_in_process,
            lies=self.lies,
            neighbours=self.beside_neighbours,
            pauses=self.pauses,
        )


class Campaign:
    """Executes and judges a plan in a world of its own; a context manager (it owns the world)."""

    def __init__(self, config: CampaignConfig) -> None:
        self.config = config
        self.world = open_world(config.tier, config.workdir / "world", config.store_url)
        self.world.worker_timeout_s = config.worker_timeout
        self.world.canaries.on = config.canaries
        self._real: World | None = None  # the real tier's, beside it: opened when first needed
        self._real_taken = 0  # real-pass runs counted so far, for the shards' split
        self.runs: list[RunResult] = []
        self.coverage: list[ScenarioCoverage] = []
        self.stopped: dict[tuple[str, str], Stop] = {}  # runs stopped for a person (operators)
        self.histories = KeptHistories()  # of runs in doubt, for the report's timelines

    def close(self) -> None:
        try:
            self.world.close()
        finally:
            if self._real is not None:
                self._real.close()

    def world_for(self, tier: Tier) -> World:
        """The world a run of `tier` runs in: the campaign's own, or for a real-tier run of an
        in-process campaign (its real pass, a named case that requires the tier, a replayed
        real schedule) a real world beside it, opened on first use: the same kind of store
        (`--db`), its own folder, services and clock."""
        if tier == self.config.tier:
            return self.world
        if self._real is None:
            config = self.config
            self._real = open_world("real", config.workdir / "world-real", config.store_url)
            self._real.worker_timeout_s = config.worker_timeout
            self._real.canaries.on = config.canaries
        return self._real

    def __enter__(self) -> Campaign:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(
        self,
        scenario: Scenario,
        schedule: FaultSchedule,
        kind: RunKind,
        expect: Expect | None = None,
    ) -> tuple[RunResult, History]:
        """Run one schedule in this campaign's tier against its engine, judge it, keep it."""
        result, history = self.judge(scenario, schedule, kind, expect)
        self.keep(result)
        return result, history

    def keep(self, result: RunResult) -> None:
        self.runs.append(result)
        if self.config.on_run is not None:
            self.config.on_run(result)

    def judge(
        self,
        scenario: Scenario,
        schedule: FaultSchedule,
        kind: RunKind = "generated",
        expect: Expect | None = None,
    ) -> tuple[RunResult, History]:
        """Run one schedule in this campaign's tier against its engine, and judge it; a
        schedule that asks for the real tier keeps it (`world_for`), so its file replays it."""
        engine = self.config.engine.ref
        tier: Tier = "real" if "real" in (schedule.tier, self.config.tier) else "inprocess"
        if schedule.tier != tier or schedule.engine != engine:
            schedule = schedule.model_copy(update={"tier": tier, "engine": engine})
        world = self.world_for(tier)
        started = time.perf_counter()
        history = run_in_tier(world, scenario, schedule, self.config.engine)
        wall_s = time.perf_counter() - started
        remember(self.stopped, kind, history)
        keep, shard = self.config.engine.keep, self.config.shard
        # the queue it leaves behind; every shard makes each recording, the first queues it
        first = shard is None or shard[0] == 1
        queued = history.final_status in QUEUED and (kind != "clean" or first)
        if keep is not None and queued:
            keep(world.store, history.workflow_id, self.config.workdir)
        verdicts = check_all(history, scenario.workflow)
        if expect is not None:
            verdicts.append(expectation(history, expect))
        valid = combine(verdicts)
        objectives = measure_objectives(history, scenario.objectives)
        schedule_file = None
        kept = self.histories.keeps(valid, history.final_status)
        # a miss and a run in doubt are replayed from the report too
        if valid is False or objectives.missed or in_doubt(valid, history.final_status):
            path = self.config.workdir / "schedules" / f"{scenario.name}-{schedule.run_id}.json"
            schedule_file = str(save_schedule(schedule, path))
        result = RunResult(
            run_id=schedule.run_id,
            scenario=scenario.name,
            kind=kind,
            label=schedule.describe(),
            schedule=schedule,
            final_status=history.final_status,
            final_state=history.final_state,
            final_reason=history.final_reason,
            crashed_at=[c.label() for c in schedule.crashes],
            controls=history.controls,
            verdicts=verdicts,
            valid=valid,
            measures=measure(history, verdicts).model_copy(update={"wall_s": wall_s}),
            schedule_file=schedule_file,
            history=history if kept else None,
            objectives=objectives,
        )
        return result, history

    def execute_planned(self, run: PlannedRun) -> tuple[RunResult, History]:
        return self.execute(run.scenario, run.schedule, run.kind, run.expect)

    def real_runs(self, scenario: Scenario, recording: History) -> list[PlannedRun]:
        """This campaign's share of `scenario`'s real-tier pass (`real_pass`): none
        when it makes none (`CampaignConfig.real_pass_skipped`), else every n-th of the pass's
        runs over the scenarios in turn, as a shard splits the plan's."""
        if self.config.real_pass_skipped is not None:
            return []
        mine = []
        for run in real_pass(scenario, recording):
            index, self._real_taken = self._real_taken, self._real_taken + 1
            if in_shard(index, self.config.shard):
                mine.append(run)
        return mine

    def run(self) -> CampaignResult:
        """The whole plan, scenario by scenario, then the extra runs (this shard's share), then
        the exploration. Every recording is made first, so that the campaign can tell how many
        runs it will make; each is kept in its place all the same."""
        started, wall = datetime.now(UTC).isoformat(timespec="seconds"), time.perf_counter()
        config = self.config
        plan = Plan(config.scenarios, config.plan_options(), config.shard)
        recorded = {}
        for scenario in config.scenarios:
            recording, history = self.judge(scenario, clean(scenario).schedule, "clean")
            plan.observe(clean(scenario), history)
            recorded[scenario.name] = recording
        real_runs = {s.name: self.real_runs(s, plan.recordings[s.name]) for s in config.scenarios}
        searches = exploration(self, plan, config.scenarios)
        operated = operator_searches(self, config.scenarios)  # they find their stops later
        real_total = sum(map(len, real_runs.values()))
        announce = self._announcer(plan, searches, operated, wall, real_total)
        announce()
        for scenario in config.scenarios:
            done: list[tuple[PlannedRun, RunResult]] = []
            real = real_runs[scenario.name]
            for planned in plan.scenario_runs(scenario):
                if planned.kind not in ("clean", "single") and real:  # the singles are in
                    done += [(r, self.execute_planned(r)[0]) for r in real]
                    real = []
                if planned.kind == "clean":
                    result = recorded[scenario.name]
                    self.keep(result)
                else:
                    result, history = self.execute_planned(planned)
                    plan.observe(planned, history)
                done.append((planned, result))
            done += [(r, self.execute_planned(r)[0]) for r in real]
            self.coverage.append(covered(plan.recordings[scenario.name], done))
            announce()
        by_name = {s.name: s for s in config.scenarios}
        extra = (PlannedRun(by_name[s.scenario], kind, s) for kind, s in config.extra)
        for planned in plan.extra_runs(extra):
            self.execute_planned(planned)
        for search in searches:
            search.run()  # it keeps each of its results as it goes
            announce()
        for operator in operated:
            for result in operator.run():
                self.keep(result)
            announce()
        self.coverage = [with_generated(c, self.runs) for c in self.coverage]
        shard = config.shard
        return CampaignResult(
            engine=config.engine.name,
            lacks=sorted(config.engine.lacks),
            tier=config.tier,
            backend=self.world.store.label,
            seed=config.seed,
            shard=f"{shard[0]}/{shard[1]}" if shard else None,
            started_at=started,
            duration_s=time.perf_counter() - wall,
            scenarios=self.coverage,
            runs=self.runs,
        )

    def _announcer(
        self,
        plan: Plan,
        searches: Sequence[Exploration],
        operated: Sequence[OperatorSearch],
        started: float,
        real: int = 0,
    ) -> Callable[[], None]:
        """Tells `on_plan` the runs the campaign expects to make, as it knows them now: the
        plan's (`Plan.expected_runs`), each search's — what it kept once it has run, else
        its budget of runs, or for a budget of seconds as many runs as the pace so far fits —,
        the operators' (`OperatorSearch.expected_runs`) and the `real` runs of the real-tier
        pass."""
        on_plan, extra = self.config.on_plan, len(self.config.extra)
        if on_plan is None:
            return lambda: None
        planned = len(plan.scenarios)  # the recordings, made before the first announcement

        def expected(search: Exploration) -> int:
            if search.runs or not search.budget:
                return len(search.results)
            if search.budget.runs:
                return search.budget.runs
            pace = (time.perf_counter() - started) / max(planned, len(self.runs))
            return round((search.budget.seconds or 0.0) / max(pace, 1e-3))

        return lambda: on_plan(
            plan.expected_runs(extra)
            + real
            + sum(map(expected, searches))
            + sum(o.expected_runs() for o in operated)
        )
