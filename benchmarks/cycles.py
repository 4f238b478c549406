"""Crash-recover cycles per second, the enumerations' wall time, and scaling with length.

A cycle is one run of the benchmark workflow whose first worker is killed at one boundary and
whose next worker recovers it to a terminal state (`run_schedule`, history collection
included, the oracle not). The crash points cycle through every boundary the recording
discovered, so a cycle is on average one whole workflow plus one recovery.
"""

from __future__ import annotations

import gc
import itertools
import resource
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flow import make_scenario
from sqlalchemy import create_engine, text

from killpoint.harness.campaign.plan import recovery_points, singles
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule

Runner = Callable[[World, Scenario, FaultSchedule], History]


def inprocess(world: World, scenario: Scenario, schedule: FaultSchedule) -> History:
    """A run of the reference engine in the in-process tier."""
    return run_schedule(world, scenario, schedule, REFERENCE)


@dataclass
class Throughput:
    cycles: int
    wall_s: float
    cpu_s: float
    started: float = 0.0  # perf_counter (CLOCK_MONOTONIC: one timeline for all processes)

    @property
    def per_s(self) -> float:
        return self.cycles / self.wall_s

    @property
    def per_cpu_s(self) -> float:
        return self.cycles / self.cpu_s if self.cpu_s else 0.0


def recording(world: World, scenario: Scenario, runner: Runner = inprocess) -> History:
    return runner(world, scenario, FaultSchedule(scenario=scenario.name, run_id="clean"))


def crash_cycles(
    world: World,
    scenario: Scenario,
    cycles: int,
    runner: Runner = inprocess,
    tag: str = "c",
) -> Throughput:
    """`cycles` runs, each crashed once (boundaries in turn) and recovered to terminal."""
    schedules = [run.schedule for run in singles(scenario, recording(world, scenario, runner))]
    plan = list(itertools.islice(itertools.cycle(schedules), cycles))
    wall, cpu = time.perf_counter(), time.process_time()
    for n, schedule in enumerate(plan):
        history = runner(world, scenario, schedule.model_copy(update={"run_id": f"{tag}{n}"}))
        if history.final_status != "completed":
            raise RuntimeError(f"{schedule.describe()} ended {history.final_status}")
    return Throughput(len(plan), time.perf_counter() - wall, time.process_time() - cpu, wall)


def canary_scan_cost(world: World, scenario: Scenario, cycles: int) -> tuple[float, float]:
    """The canary scan's time per cycle (ms) and its share of a cycle's wall time, over
    `cycles` crash-recover cycles (`harness/run/canary_scan.py`: the store, the world's files and
    the history searched, each file only where the run changed it)."""
    canaries, spent = world.canaries, [0.0]
    scanned = canaries.scanned

    def timed(*args: Any) -> History:
        start = time.perf_counter()
        try:
            return scanned(*args)
        finally:
            spent[0] += time.perf_counter() - start

    canaries.scanned = timed  # type: ignore[method-assign,assignment]
    try:
        done = crash_cycles(world, scenario, cycles, tag="s")
    finally:
        del canaries.scanned
    return spent[0] / done.cycles * 1000, spent[0] / done.wall_s


def parallel_cycles(
    root: Path, scenario: Scenario, cycles: int, processes: int, real: bool = False
) -> Throughput:
    """`cycles` crash-recover cycles in each of `processes` forked processes at once, each in a
    world of its own, as `killpoint run --jobs` runs a campaign: all the cycles over the span
    from the first loop's start to the last one's end (setting up a world is not a cycle; CPU
    time is not summed across processes: 0)."""
    from killpoint.harness.campaign.jobs import in_processes

    runner = real_runner() if real else inprocess

    def work(i: int) -> Callable[[object], tuple[int, float, float]]:
        def run(_report: object) -> tuple[int, float, float]:
            opened = real_world(root / f"p{i}") if real else sqlite_world(root / f"p{i}")
            with opened as world:
                done = crash_cycles(world, scenario, cycles, runner, tag="p")
                return done.cycles, done.started, done.started + done.wall_s

        return run

    spans = in_processes([work(i) for i in range(processes)])
    first, last = min(s for _, s, _ in spans), max(e for _, _, e in spans)
    return Throughput(sum(n for n, _, _ in spans), last - first, 0.0)


@dataclass
class Enumeration:
    runs: int
    wall_s: float
    violations: int
    planned: int = 0  # runs the whole enumeration has (more than `runs` when sampled)

    @property
    def projected_s(self) -> float:
        """The whole enumeration's time, from the runs made (itself when not sampled)."""
        return self.wall_s * self.planned / self.runs if self.runs else 0.0


def single_enumeration(
    world: World, scenario: Scenario, tag: str = "e", sample: int | None = None
) -> Enumeration:
    """The exhaustive single-crash enumeration, recording run and oracle included; `sample`
    runs only that many singles, evenly spaced, for a projection of the whole."""
    wall = time.perf_counter()
    rec = run_schedule(
        world, scenario, FaultSchedule(scenario=scenario.name, run_id=f"{tag}r"), REFERENCE
    )
    plan = [run.schedule for run in singles(scenario, rec)]
    chosen = plan if sample is None or sample >= len(plan) else plan[:: -(-len(plan) // sample)]
    runs, bad = 1, 0
    for schedule in chosen:
        history = run_schedule(world, scenario, _renamed(schedule, tag), REFERENCE)
        runs += 1
        bad += any(v.valid is False for v in check_all(history, scenario.workflow))
    return Enumeration(runs, time.perf_counter() - wall, bad, planned=1 + len(plan))


def double_enumeration(
    world: World, scenario: Scenario, limit: int | None = None, tag: str = "d"
) -> Enumeration:
    """Every single crash, then every hit of each single's first recovery crashed again
    (exhaustive pairs; `limit` caps the number of pairs for --quick). Oracle included."""
    wall = time.perf_counter()
    rec = run_schedule(
        world, scenario, FaultSchedule(scenario=scenario.name, run_id=f"{tag}r"), REFERENCE
    )
    runs, bad = 1, 0
    pairs: list[FaultSchedule] = []
    for single in singles(scenario, rec):
        schedule = single.schedule
        history = run_schedule(world, scenario, _renamed(schedule, tag), REFERENCE)
        runs += 1
        bad += any(v.valid is False for v in check_all(history, scenario.workflow))
        for j, second in enumerate(recovery_points(history)):
            pairs.append(
                schedule.model_copy(
                    update={
                        "run_id": f"{tag}-{schedule.run_id}-{j}",
                        "crashes": (*schedule.crashes, second),
                    }
                )
            )
    for schedule in pairs[:limit]:
        history = run_schedule(world, scenario, schedule, REFERENCE)
        runs += 1
        bad += any(v.valid is False for v in check_all(history, scenario.workflow))
    return Enumeration(runs, time.perf_counter() - wall, bad)


def _renamed(schedule: FaultSchedule, tag: str) -> FaultSchedule:
    return schedule.model_copy(update={"run_id": f"{tag}-{schedule.run_id}"})


@dataclass
class Scaling:
    steps: int
    runs: int
    planned: int
    wall_s: float
    projected_s: float
    peak_traced_mb: float
    max_rss_mb: float


def scaling(root: Path, steps: int, sample: int | None = None) -> Scaling:
    """The single-crash enumeration of a workflow of `steps` steps: its time and peak memory
    (tracemalloc's peak of Python allocations; the process's max RSS so far as a bound)."""
    scenario = make_scenario(steps)
    world = World.open(root / f"scale-{steps}")
    try:
        gc.collect()
        tracemalloc.start()
        result = single_enumeration(world, scenario, sample=sample)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        world.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return Scaling(
        steps, result.runs, result.planned, result.wall_s, result.projected_s, peak / 2**20, rss
    )


# -- worlds on each backend ------------------------------------------------------------------


@contextmanager
def sqlite_world(root: Path) -> Iterator[World]:
    world = World.open(root)
    try:
        yield world
    finally:
        world.close()


@contextmanager
def postgres_world(root: Path, url: str) -> Iterator[World]:
    """A world on a fresh PostgreSQL schema (named in the URL's search_path, so a forked
    worker's own `Store(url)` lands in it too), dropped afterwards."""
    schema = f"kp_bench_{uuid.uuid4().hex[:10]}"
    sep = "&" if "?" in url else "?"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        world = World.open(root, f"{url}{sep}options=-csearch_path%3D{schema}")
        try:
            yield world
        finally:
            world.close()
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def postgres_available(url: str) -> bool:
    try:
        engine = create_engine(url, connect_args={"connect_timeout": 2})
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
        return True
    except Exception:
        return False


@contextmanager
def real_world(root: Path, store_url: str | None = None) -> Iterator[World]:
    """The real-death tier: forked workers that SIGKILL themselves, services over loopback."""
    from killpoint.harness.run.realtier import open_real_world

    world = open_real_world(root, store_url)
    try:
        yield world
    finally:
        world.close()


def real_runner() -> Runner:
    from killpoint.harness.run.realtier import run_schedule_real

    def real(world: World, scenario: Scenario, schedule: FaultSchedule) -> History:
        return run_schedule_real(world, scenario, schedule, REFERENCE)

    return real
