"""Systematic against random: runs until a mutant is first caught.

Systematic: the campaign's exhaustive single-crash enumeration — a recording run per scenario,
then one run per discovered boundary hit crashing the first worker there, in the campaign's
order (`harness.campaign.plan.singles`: the lost-response windows first, then the effect
protocol, then the routine boundaries) — until the oracle judges a run false. Three orders are
counted from the same verdicts:

- `campaign`: scenario by scenario, as `killpoint run` does (the recording, then its singles);
- `hunt`: every recording first, then the singles of all scenarios by risk, as `killpoint
  mutants` does (without its named cases: this is a comparison of single crashes);
- `workflow`: scenario by scenario, singles in the order of the hits (the order before the
  campaign ranked them), for comparison in the same run.

Random (chaos-monkey style): each run picks one of the same scenarios and kills the worker after
a random delay, drawn uniformly over the wall time a clean worker takes. A kill at time t lands
in the crash state of the last boundary the worker passed before t, so a boundary's chance is
the share of the run it stands for in wall time (a tight window such as "response read, receipt
not yet committed" is rarely hit). The models (`MODELS`, `weights`):

- `time` (the headline): while a mutating request is in flight, the service commits before the
  response reaches the worker's transport; a kill after that commit leaves the lost-response
  state (the service has the effect, the worker does not know) — the state of the
  `transport.response_received` hit that follows — so that slice counts for that hit;
- `hooks`: the same without the refinement (all in-flight time counts for "not delivered");
- `warm`: `time`, the delay drawn from the first boundary hit on, as if building the engine,
  the start message and loading the checkpoint took no time (a bound in random's favour: of
  that 1.5 ms only the engine's construction, 0.15 ms, is not work on the workflow);
- `hits`: uniform over the boundary hits ("after a random number of hits").

Wall times are the median over a few clean runs of the mutant. The in-process tier is
deterministic — a crash at the same boundary gives the same history — so each boundary is run
and judged once, and the random draws (seeded) read the verdict of the boundary they land on.
Mutants caught by the clean run need no fault; mutants no single crash catches (they need a
tampered checkpoint, a network fault or two workers) are listed but left out of the ratio.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from killpoint.harness.campaign.plan import Risk, crash_risk, singles
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History, WorkerRecord
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.run.killswitch import Hit
from killpoint.harness.run.runner import Run
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule

CAP = 100_000
TIMING_RUNS = 5  # clean runs per table whose median wall times weigh the random draws


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


@contextlib.contextmanager
def _service_commits(world: World) -> Iterator[list[float]]:
    """Wall times at which the in-process services commit a state change (the transaction a
    mutating request's effect and outcome are written in), while the block runs."""
    db = world.services.journal.db
    inner = db.transaction
    commits: list[float] = []

    @contextlib.contextmanager
    def transaction() -> Iterator[None]:
        with inner():
            yield
        commits.append(time.perf_counter())

    db.transaction = transaction  # type: ignore[method-assign]  # this instance only
    try:
        yield commits
    finally:
        del db.transaction  # the class's method again


def _run(
    world: World, scenario: Scenario, schedule: FaultSchedule, spec: EngineSpec
) -> tuple[History, list[float], list[float]]:
    """(history, worker 0's hit offsets and its end, service commit offsets) of one run."""
    world.services.reset()
    world.services.set_plan(schedule.network)
    world.runs += 1
    with _service_commits(world) as commits:
        run = _TimedRun(world, scenario, schedule, spec)
        history = run.execute()
    offsets = [t for worker, t in run.walls if worker == 0]
    offsets.append(run.ends.get(0, offsets[-1] if offsets else 0.0))
    return history, offsets, [c - run.t0 for c in commits]


def _caught(history: History, scenario: Scenario) -> bool:
    return any(v.valid is False for v in check_all(history, scenario.workflow))


def weights(
    offsets: list[float], commits: list[float], delivered: list[bool]
) -> dict[str, list[float]]:
    """Wall-time weight of each hit, by random model (see `MODELS`).

    `hooks`: from the hit to the next one; the first hit's weight starts at the worker's start,
    the last one's ends at the worker's end. `time`: the same, where a mutating request reached
    a service between two hits (`delivered`, see `harness.campaign.plan.crash_risk`), with the slice
    from the service's last commit to the later hit moved to the later hit — the service changed
    state before that hit was reached, so a kill in between leaves its state (the lost-response
    window at `transport.response_received`). `warm`: `time`, with the kill
    window opening at the first hit instead of the worker's start (no engine construction,
    start message or checkpoint load before the lease)."""
    hits, end = offsets[:-1], offsets[-1]
    plain = [
        (hits[i + 1] if i + 1 < len(hits) else end) - (0.0 if i == 0 else hits[i])
        for i in range(len(hits))
    ]
    moved = list(plain)
    for i in range(1, len(hits)):
        inside = [c for c in commits if hits[i - 1] <= c < hits[i]] if delivered[i] else []
        if inside:
            slice_ = hits[i] - inside[-1]
            moved[i - 1] -= slice_
            moved[i] += slice_
    warm = list(moved)
    if hits:
        warm[0] -= hits[0]
    return {"time": moved, "hooks": plain, "warm": warm}


# The random models: what a kill's chance of landing on each boundary hit is proportional to.
MODELS = {
    "time": "wall time, in-flight time after the service's commit counted as lost response",
    "hooks": "wall time between boundary hooks only",
    "warm": "wall time from the first boundary hit on (a bound in random's favour)",
    "hits": "one chance per boundary hit",
}


@dataclass
class Table:
    """One scenario under one engine: each boundary hit's verdict, risk, order and weights."""

    scenario: str
    clean_caught: bool
    labels: list[str] = field(default_factory=list)  # in the order of the hits
    caught: list[bool] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)
    order: list[int] = field(default_factory=list)  # positions, in the campaign's order
    weights: dict[str, list[float]] = field(default_factory=dict)  # by model, median

    def weights_by(self, by: str) -> list[float]:
        """The weights a random draw of model `by` (one of `MODELS`) uses."""
        return [1.0] * len(self.caught) if by == "hits" else self.weights[by]

    def catching(self) -> list[dict[str, Any]]:
        """The boundary hits whose single crash is judged false, with where each comes."""
        time_, hooks = self.weights["time"], self.weights["hooks"]
        total, hooks_total = sum(time_), sum(hooks)
        rank = {n: k for k, n in enumerate(self.order)}
        return [
            {
                "scenario": self.scenario,
                "boundary": self.labels[n],
                "position": n,
                "campaign_rank": rank[n],
                "risk": self.risks[n].name.lower(),
                "time_share": time_[n] / total,
                "hook_time_share": hooks[n] / hooks_total,
            }
            for n in range(len(self.caught))
            if self.caught[n]
        ]


def tabulate(world: World, scenario: Scenario, spec: EngineSpec, tag: str) -> Table:
    clean = FaultSchedule(scenario=scenario.name, run_id=f"{tag}-clean")
    history, offsets, commits = _run(world, scenario, clean, spec)
    delivered = [risk is Risk.DELIVERED for risk in crash_risk(history)]
    timings = [weights(offsets, commits, delivered)]
    for k in range(1, TIMING_RUNS):
        again = clean.model_copy(update={"run_id": f"{tag}-clean-{k}"})
        _, offsets, commits = _run(world, scenario, again, spec)
        timings.append(weights(offsets, commits, delivered))
    hits = [h for h in history.hits if h.worker == 0]
    table = Table(
        scenario.name,
        _caught(history, scenario),
        labels=[h.label() for h in hits],
        caught=[False] * len(hits),
        weights={
            model: [statistics.median(w) for w in zip(*(t[model] for t in timings), strict=True)]
            for model in timings[0]
        },
    )
    table.risks = crash_risk(history)
    for single in singles(scenario, history):
        schedule = single.schedule
        n = int(schedule.run_id.removeprefix("single-"))
        table.order.append(n)
        renamed = schedule.model_copy(update={"run_id": f"{tag}-{schedule.run_id}"})
        crashed, _, _ = _run(world, scenario, renamed, spec)
        table.caught[n] = _caught(crashed, scenario)
    return table


# -- the systematic side -------------------------------------------------------------------------


def exhaustive_runs(tables: list[Table], order: str = "campaign") -> int | None:
    """Runs until the first one judged false: `campaign`, `hunt` or `workflow` order."""
    if order == "hunt":
        plan: list[tuple[Table, int | None]] = [(t, None) for t in tables]
        ranked = sorted(
            (t.risks[n], i, k, n) for i, t in enumerate(tables) for k, n in enumerate(t.order)
        )
        plan += [(tables[i], n) for _, i, _, n in ranked]
    else:
        plan = []
        for t in tables:
            positions = t.order if order == "campaign" else list(range(len(t.caught)))
            plan += [(t, None)] + [(t, n) for n in positions]
    for runs, (table, n) in enumerate(plan, start=1):
        if table.clean_caught if n is None else table.caught[n]:
            return runs
    return None


# -- the random side -----------------------------------------------------------------------------


def _draw(rng: random.Random, w: list[float]) -> int:
    t, i = rng.random() * sum(w), 0
    while i < len(w) - 1 and t >= w[i]:
        t -= w[i]
        i += 1
    return i


def random_runs(tables: list[Table], seed: int, by: str) -> int:
    """Kills until one is judged false, under random model `by` (one of `MODELS`)."""
    rng = random.Random(seed)
    for run in range(1, CAP + 1):
        table = rng.choice(tables)
        if not any(table.caught):
            continue
        i = _draw(rng, table.weights_by(by))
        if table.caught[i]:
            return run
    return CAP


def expected_random_runs(tables: list[Table], by: str) -> float | None:
    """The mean of `random_runs` over infinitely many seeds: 1 / the chance one kill catches."""
    chances = []
    for t in tables:
        w = t.weights_by(by)
        total = sum(w)
        chances.append(sum(x for x, c in zip(w, t.caught, strict=True) if c) / total if w else 0)
    p = statistics.mean(chances)
    return 1 / p if p > 0 else None


@dataclass
class Detection:
    mutant: str
    exhaustive_runs: int | None  # the campaign's order
    exhaustive_hunt_runs: int | None
    exhaustive_workflow_runs: int | None  # the order of the hits (the previous order)
    random_runs: dict[str, float] = field(default_factory=dict)  # by model: mean over seeds
    expected_random_runs: dict[str, float] = field(default_factory=dict)  # by model: 1 / p
    catching: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


def tabulate_all(
    name: str, spec: EngineSpec, scenarios: list[Scenario], root: Path
) -> dict[str, Table]:
    """Each scenario's table under one engine, in a world of its own. (The runs' names go
    into the scenarios' inputs, research_publish's slug among them: no underscore.)"""
    world = World.open(root / name)
    try:
        return {s.name: tabulate(world, s, spec, "d") for s in scenarios}
    finally:
        world.close()


def detect(name: str, tables: list[Table], seeds: int) -> Detection:
    runs = {o: exhaustive_runs(tables, o) for o in ("campaign", "hunt", "workflow")}
    row = Detection(name, runs["campaign"], runs["hunt"], runs["workflow"])
    row.catching = [c for t in tables for c in t.catching()]
    if any(t.clean_caught for t in tables):
        row.note = "caught by a clean run"
        return row
    if runs["campaign"] is None:
        row.note = "no single crash catches it"
        return row
    for by in MODELS:
        row.random_runs[by] = statistics.mean(
            random_runs(tables, seed, by) for seed in range(seeds)
        )
        expected = expected_random_runs(tables, by)
        if expected is not None:
            row.expected_random_runs[by] = expected
    return row


def ratios(rows: list[Detection]) -> dict[str, float]:
    """Sum of random runs over sum of exhaustive runs, over the mutants a single crash (and no
    clean run) catches: the headline (`time` against the campaign's order), each other random
    model against the campaign's order, and `time` against the hunt's and the workflow order."""
    timed = [r for r in rows if r.exhaustive_runs and r.random_runs]
    if not timed:
        return {}

    def randoms(by: str) -> float:
        return sum(r.random_runs[by] for r in timed)

    def exhaustive(attr: str) -> float:
        return float(sum(getattr(r, attr) or 0 for r in timed))

    key = "runs_to_detection_ratio_random_vs_exhaustive"
    out = {key: randoms("time") / exhaustive("exhaustive_runs")}
    for by in MODELS:
        if by != "time":
            out[f"runs_to_detection_ratio_random_{by}_vs_exhaustive"] = randoms(by) / exhaustive(
                "exhaustive_runs"
            )
    out[f"{key}_hunt"] = randoms("time") / exhaustive("exhaustive_hunt_runs")
    out[f"{key}_workflow_order"] = randoms("time") / exhaustive("exhaustive_workflow_runs")
    if all("time" in r.expected_random_runs for r in timed):
        out["runs_to_detection_ratio_expected_random_vs_exhaustive"] = sum(
            r.expected_random_runs["time"] for r in timed
        ) / exhaustive("exhaustive_runs")
    return out


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
    n = len(table.caught)
    results = []
    for seed in range(seeds):
        rng, seen, runs = random.Random(seed), set[int](), 0
        while len(seen) < n and runs < CAP * 10:
            runs += 1
            seen.add(_draw(rng, table.weights["time"]))
        results.append(runs)
    return statistics.mean(results)
