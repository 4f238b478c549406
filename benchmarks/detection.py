"""Systematic against random: runs until a mutant is first caught.

Exhaustive: the campaign's order — a recording run per scenario, then one run per discovered
boundary hit, crashing the first worker there — until the oracle judges a run false.

Random (chaos-monkey style): each run picks one of the same scenarios and kills the worker after
a random delay, drawn uniformly over the wall time a clean worker takes. A kill at time t lands
on the last boundary the worker passed before t, so a boundary's chance is the share of the run
it stands for in wall time (a tight window such as "response read, receipt not yet committed"
is rarely hit). The in-process tier is deterministic — a crash at the same boundary gives the
same history — so each boundary is run and judged once, and the random draws (seeded) read the
verdict of the boundary they land on. A second random variant draws the crash uniformly over the
boundary hits instead ("after a random number of hits").

Mutants caught by the clean run need no fault; mutants no single crash catches (they need a
tampered checkpoint, a network fault or two workers) are listed but left out of the ratio.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.campaign import singles
from harness.checkers import check_all
from harness.history import History, WorkerRecord
from harness.killswitch import Hit
from harness.runner import REFERENCE, EngineSpec, Run
from harness.schedule import FaultSchedule
from harness.world import World
from scenarios.base import Scenario

CAP = 100_000


class _TimedRun(Run):
    """A run that also notes the wall time of each boundary hit of its workers."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.walls: list[tuple[int, float]] = []
        self.t0 = time.perf_counter()

        self.ends: dict[int, float] = {}

    def record(self, hit: Hit) -> None:
        self.walls.append((hit.worker, time.perf_counter() - self.t0))
        super().record(hit)

    def run_worker(self, worker: int, hook_wrap: Any = None) -> WorkerRecord:
        record = super().run_worker(worker, hook_wrap)
        self.ends[worker] = time.perf_counter() - self.t0
        return record


def _run(
    world: World, scenario: Scenario, schedule: FaultSchedule, spec: EngineSpec
) -> tuple[History, list[float]]:
    world.services.reset()
    world.services.set_plan(schedule.network)
    world.runs += 1
    run = _TimedRun(world, scenario, schedule, spec)
    history = run.execute()
    offsets = [t for worker, t in run.walls if worker == 0]
    offsets.append(run.ends.get(0, offsets[-1] if offsets else 0.0))
    return history, offsets


def _caught(history: History, scenario: Scenario) -> bool:
    return any(v.valid is False for v in check_all(history, scenario.workflow))


@dataclass
class Table:
    """One scenario under one engine: each boundary's verdict and wall-time weight."""

    scenario: str
    clean_caught: bool
    caught: list[bool] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)


def tabulate(world: World, scenario: Scenario, spec: EngineSpec, tag: str) -> Table:
    clean = FaultSchedule(scenario=scenario.name, run_id=f"{tag}-clean")
    history, offsets = _run(world, scenario, clean, spec)
    # wall-time weight of hit i: from it to the next hit (the last one: to the worker's end)
    hits, end = offsets[:-1], offsets[-1]
    weights = [
        (hits[i + 1] if i + 1 < len(hits) else end) - (0.0 if i == 0 else hits[i])
        for i in range(len(hits))
    ]
    table = Table(scenario.name, _caught(history, scenario), weights=weights)
    for _, schedule in singles(scenario.name, history):
        renamed = schedule.model_copy(update={"run_id": f"{tag}-{schedule.run_id}"})
        crashed, _ = _run(world, scenario, renamed, spec)
        table.caught.append(_caught(crashed, scenario))
    return table


@dataclass
class Detection:
    mutant: str
    exhaustive_runs: int | None
    random_time_runs: float | None  # mean over seeds, chaos monkey by wall time
    random_hits_runs: float | None  # mean over seeds, uniform over boundary hits
    note: str = ""


def exhaustive_runs(tables: list[Table]) -> int | None:
    runs = 0
    for table in tables:
        runs += 1
        if table.clean_caught:
            return runs
        for caught in table.caught:
            runs += 1
            if caught:
                return runs
    return None


def random_runs(tables: list[Table], seed: int, by_time: bool) -> int:
    rng = random.Random(seed)
    for run in range(1, CAP + 1):
        table = rng.choice(tables)
        if not table.caught:
            continue
        if by_time:
            total = sum(table.weights)
            t, i = rng.random() * total, 0
            while i < len(table.weights) - 1 and t >= table.weights[i]:
                t -= table.weights[i]
                i += 1
        else:
            i = rng.randrange(len(table.caught))
        if table.caught[i]:
            return run
    return CAP


def detect(
    name: str, spec: EngineSpec, scenarios: list[Scenario], root: Path, seeds: int
) -> Detection:
    world = World.open(root / name)
    try:
        tables = [tabulate(world, s, spec, f"{name}") for s in scenarios]
    finally:
        world.close()
    exhaustive = exhaustive_runs(tables)
    if any(t.clean_caught for t in tables):
        return Detection(name, exhaustive, None, None, "caught by a clean run")
    if exhaustive is None:
        return Detection(name, None, None, None, "no single crash catches it")
    by_time = statistics.mean(random_runs(tables, seed, True) for seed in range(seeds))
    by_hits = statistics.mean(random_runs(tables, seed, False) for seed in range(seeds))
    return Detection(name, exhaustive, by_time, by_hits)


def reference_coverage(scenario: Scenario, root: Path, seeds: int) -> tuple[int, float]:
    """(runs the exhaustive enumeration makes, mean random kills to crash every boundary once)
    for the reference engine on one scenario."""
    world = World.open(root / "reference")
    try:
        table = tabulate(world, scenario, REFERENCE, "ref")
    finally:
        world.close()
    return 1 + len(table.caught), coverage_runs(table, seeds)


def coverage_runs(table: Table, seeds: int) -> float:
    """Mean random kills (by wall time) until every boundary has been crashed at least once."""
    n, total = len(table.weights), sum(table.weights)
    results = []
    for seed in range(seeds):
        rng, seen, runs = random.Random(seed), set(), 0
        while len(seen) < n and runs < CAP * 10:
            runs += 1
            t, i = rng.random() * total, 0
            while i < n - 1 and t >= table.weights[i]:
                t -= table.weights[i]
                i += 1
            seen.add(i)
        results.append(runs)
    return statistics.mean(results)
