"""Exploration past the plan: generated schedules deeper than the plan's, new combinations first.

The plan crashes each hit once or twice and faults one mutating request at a time. Real bugs
need more: a crash right after a 5xx (repeated past the attempt budget), a crash while a
lookup or a verification read fails, withheld visibility with a crash, clock jumps, two workers
switching at any hit, the start message redelivered after the run ended or redelivered with
content that lies (`harness.lies`), now and then a neighbour in the run's world
(`neighbour_plan.drawn`, the last draw). Hypothesis draws
such schedules from what the plan's runs showed (`Menu`: the recording's hits per step, in a
hunt the recoveries' own hits too, the operations of each step's service), one base
combination of a crash point and a fault on the same step's service first, then the extras
around it. The base is picked among the least covered (boundary, operation, fault)
combinations so far, so new combinations come first (`reached` keeps the (boundary, ledger
status, faults) triples the runs reached). A violation is shrunk by Hypothesis to a minimal
schedule, which the campaign saves for `killpoint replay`. Deterministic for a seed: no
example database (a campaign's verdicts must not depend on earlier sessions), a fixed
Hypothesis seed per scenario, coverage updated in run order and frozen while a violation is
shrunk; the bounds of every draw depend on the scenario alone, as Hypothesis requires.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from killpoint.contract.errors import KillpointError
from killpoint.fake_services.faults import OPERATIONS, FaultMode
from killpoint.harness.campaign.neighbour_plan import DRAW, drawn
from killpoint.harness.campaign.recording import (
    Recovery,
    crash_risk,
    first_hits,
    network_modes,
    point,
    recovery_only,
)
from killpoint.harness.history import History
from killpoint.harness.lies import kinds_for
from killpoint.harness.results import RunResult
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import ClockJump, FaultSchedule, HitPoint, Interleave, Neighbour

# A read that fails as the client sees it, and as the journal records it: a lost response to a
# read is journaled `ok` (the service answered), which the oracle would take for a read seen
READ_MODES = (FaultMode.TIMEOUT_BEFORE_COMMIT, FaultMode.ERROR_BEFORE_COMMIT)
SHRINK_RUNS = 150  # runs a violation's shrinking may take beyond the budget
MAX_REPEAT = 8  # a crash and its fault repeated in this many workers at most (past small budgets)
TOP = 12  # the base combination is drawn among this many least covered candidates
JUMPS = (31.0, 3601.0)  # past the lease ttl, past an approval's
Judge = Callable[[Scenario, FaultSchedule], tuple[RunResult, History]]


@dataclass(frozen=True)
class Budget:
    """How much exploring a campaign does: `runs` runs per scenario, or `seconds` of wall time
    in all."""

    runs: int | None = None
    seconds: float | None = None

    @classmethod
    def parse(cls, text: str | None) -> Budget:
        """`RUNS` (`200`), `SECONDS` (`30s`), or `0`/`off` for none."""
        value = (text or "0").strip().lower()
        if value in ("0", "off", "no", "none"):
            return cls()
        try:
            if value.endswith("s"):
                return cls(seconds=float(value[:-1]))
            return cls(runs=int(value))
        except ValueError:
            raise KillpointError(
                f"--explore wants RUNS or SECONDS (200, 30s), got {text!r}"
            ) from None

    def __bool__(self) -> bool:
        return bool(self.runs or self.seconds)

    def split(self, share: float) -> tuple[Budget, Budget]:
        """This budget in two passes: `share` of it first, the rest after."""
        if self.runs:
            first = max(1, round(self.runs * share))
            return Budget(runs=first), Budget(runs=self.runs - first)
        if self.seconds:
            return Budget(seconds=self.seconds * share), Budget(seconds=self.seconds * (1 - share))
        return self, self

    def per_scenario(self, scenarios: int) -> Budget:
        """Each scenario's share: `runs` each (any scenario is explored as deep as a lone one
        would be), `seconds` split evenly."""
        if self.seconds is None or not scenarios:
            return self
        return Budget(seconds=self.seconds / scenarios)


@dataclass(frozen=True)
class Candidate:
    """One base combination: a crash point (or none) and a fault on the same step's service."""

    crash: HitPoint | None
    service: str
    operation: str
    mode: FaultMode
    order: int

    @property
    def key(self) -> tuple[str, str, str]:
        """The combination it stands for: (boundary, operation, fault), whatever the step."""
        return (self.crash.boundary if self.crash else "-", self.operation, self.mode)


@dataclass(frozen=True)
class Menu:
    """What the plan's runs showed of one scenario: what the exploration draws from."""

    scenario: Scenario
    first: tuple[HitPoint, ...]
    later: tuple[HitPoint, ...]
    candidates: tuple[Candidate, ...]
    attempts: int


def menu(scenario: Scenario, recording: History, recoveries: Sequence[Recovery]) -> Menu:
    """The menu of one scenario from its recording and the recoveries of its single crashes."""
    first = tuple(point(h) for h in first_hits(recording))
    later = first + tuple(recovery_only(first, recoveries))
    risk = dict(zip(first, crash_risk(recording), strict=True))
    services = {t.step.name: t.step.service for t in scenario.workflow.transitions}
    candidates: list[tuple[int, int, Candidate]] = []
    for name in sorted(set(filter(None, services.values()))):
        candidates += _faults(None, name, 0)  # a fault alone, no crash
    for hit in later:
        service = services.get(hit.step or "")
        if service:
            candidates += _faults(hit, service, int(risk.get(hit, 1)))
    ordered = [c for *_, c in sorted(candidates, key=lambda c: c[:2])]
    ranked = tuple(
        Candidate(c.crash, c.service, c.operation, c.mode, n) for n, c in enumerate(ordered)
    )
    return Menu(scenario, first, later, ranked, min(scenario.limits.attempts, MAX_REPEAT))


def _faults(hit: HitPoint | None, service: str, risk: int) -> list[tuple[int, int, Candidate]]:
    found = []
    for method, _, svc, operation in OPERATIONS:
        if svc != service:
            continue
        modes = READ_MODES if method == "GET" else network_modes(svc, operation)
        if (svc, operation) == ("publisher", "publish"):
            modes = (*modes, FaultMode.WITHHELD_VISIBILITY)
        for k, mode in enumerate(modes):
            found.append((risk, k, Candidate(hit, svc, operation, mode, 0)))
    return found


@dataclass
class Exploration:
    """One search, over one scenario's menu: its budget, coverage and what it found."""

    menu: Menu
    judge: Judge
    budget: Budget
    seed: int = 0
    pairs: bool = True  # two workers at once may be drawn (the in-process tier's, when asked)
    lies: bool = True  # lying start messages may be drawn (`harness.lies`)
    label: str = "x"
    clock: Callable[[], float] = time.perf_counter  # what a seconds budget is spent on
    keep: Callable[[RunResult], None] | None = None  # each result as it is kept (progress)
    neighbours: bool = True  # a neighbour may be drawn (`neighbour_plan.drawn`)
    covered: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    reached: set[tuple[str, str, str]] = field(default_factory=set)
    results: list[RunResult] = field(default_factory=list)
    best: RunResult | None = None
    first_violation_at: int | None = None  # runs until the first violating one
    runs: int = 0

    def run(self) -> list[RunResult]:
        """Search until the budget is spent; the passing runs and the minimal violation."""
        if not self.budget:
            return []
        started = self.clock()

        @settings(
            max_examples=10**6,
            database=None,
            deadline=None,
            verbosity=Verbosity.quiet,
            phases=(Phase.generate, Phase.target, Phase.shrink),
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
        )
        @hypothesis_seed(self.seed)
        @given(st.data())
        def search(data: st.DataObject) -> None:
            self._spend(started)
            self.example(data)

        # spent, the violation shrunk, or a shrink step that did not replay (the best is kept)
        with contextlib.suppress(_Spent, _Violation, Flaky):
            search()
        if self.best is not None:
            self._kept(self.best)
        return self.results

    def _kept(self, result: RunResult) -> None:
        self.results.append(result)
        if self.keep is not None:
            self.keep(result)

    def _spend(self, started: float) -> None:
        limit = self.budget.runs
        if self.best is not None:  # shrinking: a bounded number of runs more
            limit = (self.first_violation_at or 0) + SHRINK_RUNS
        elif self.runs and self._out_of_time(started):  # a seconds budget makes one run
            raise _Spent
        if limit is not None and self.runs >= limit:
            raise _Spent

    def _out_of_time(self, started: float) -> bool:
        seconds = self.budget.seconds
        return seconds is not None and self.clock() - started > seconds

    def example(self, data: st.DataObject) -> None:
        m = self.menu
        ranked = sorted(m.candidates, key=lambda c: (self.covered[c.key], c.order))
        # one in TOP draws has no base (only extras): what a shrink ends at when they suffice
        pick = data.draw(st.integers(0, TOP), label="base")
        base = ranked[pick - 1] if 0 < pick <= len(ranked) else None
        if base is None:
            data.draw(st.integers(1, m.attempts + 1), label="repeat")  # drawn either way
        schedule = self.schedule(data, m, base)
        self.runs += 1
        result, history = self.judge(m.scenario, schedule)
        if result.valid is not False and self.best is None:  # frozen while shrinking
            self.covered[base.key if base else ("-", "-", "-")] += 1
            self.reached |= _reached(schedule, history)
        if result.valid is False:
            if self.best is None:
                self.first_violation_at = self.runs
            self.best = result
            raise _Violation
        self._kept(result)

    def schedule(self, data: st.DataObject, m: Menu, base: Candidate | None) -> FaultSchedule:
        """The base combination, repeated `r` times, with the extras drawn around it.

        Every draw's bounds depend on the scenario alone, never on the base (which coverage
        picks): Hypothesis requires the same choices to draw the same way."""
        repeat = data.draw(st.integers(1, m.attempts + 1), label="repeat") if base else 0
        # (with no base, `example` drew the repeat in its place)
        crashes = [point(base.crash, w) for w in range(repeat)] if base and base.crash else []
        extra = data.draw(st.lists(st.sampled_from(m.later), max_size=2), label="more crashes")
        crashes += [point(h, len(crashes) + i) for i, h in enumerate(extra)]
        rules = [
            {"service": base.service, "operation": base.operation, "occurrence": n,
             "mode": base.mode, "params": _params(base.mode)}
            for n in range(1, repeat + 1) if base
        ]  # fmt: skip
        workers = len(crashes)
        jumps = []
        if data.draw(st.booleans(), label="clock jump"):
            at = data.draw(st.sampled_from(m.later), label="jump at")
            seconds = data.draw(st.sampled_from(JUMPS), label="seconds")
            worker = data.draw(st.integers(0, MAX_REPEAT + 3), label="jump in") % (workers + 1)
            jumps.append(ClockJump(at=point(at, worker), seconds=seconds))
        pair = None
        if self.pairs and data.draw(st.booleans(), label="two workers"):
            after = data.draw(st.integers(0, MAX_REPEAT + 3), label="pair after")
            switches = st.lists(
                st.integers(0, 2 * len(m.first)), min_size=1, max_size=3, unique=True
            )
            switch_at = tuple(sorted(data.draw(switches, label="switch at")))
            lapses = data.draw(st.booleans(), label="lease lapses")
            if workers:
                pair = Interleave(
                    after_worker=after % workers, switch_at=switch_at, pause_expires_lease=lapses
                )
        redeliver = data.draw(st.booleans(), label="redelivered start")
        redeliver_after = data.draw(st.booleans(), label="redelivered after end")
        # drawn last, each only when asked: the draws before them stay what they were
        lies = self._lies(data, m, workers) if self.lies else []
        beside: tuple[Neighbour, ...] = ()
        if self.neighbours:
            beside = drawn(data.draw(st.integers(0, DRAW - 1), label="neighbour"), m.scenario)
        return FaultSchedule.model_validate(
            {
                "scenario": m.scenario.name,
                "run_id": f"explore-{self.label}-{self.runs}",
                "crashes": crashes,
                "network": {"rules": rules},
                "clock_jumps": jumps,
                "interleave": pair,
                "redeliver_start": redeliver,
                "redeliver_after_end": redeliver_after,
                "neighbours": beside,
                # room for the pair, the redelivery and a fault-free recovery after the crashes
                "max_workers": max(12, workers + 6),
                "lies": lies,
            }
        )

    def _lies(self, data: st.DataObject, m: Menu, workers: int) -> list[dict[str, object]]:
        """Up to two lying start messages, each to a worker up to one past the recovery (drawn
        last, so the draws before them stay what they were)."""
        kinds = kinds_for(m.scenario)
        if not kinds:
            return []
        told = st.tuples(st.sampled_from(kinds), st.integers(0, MAX_REPEAT + 3))
        chosen = data.draw(st.lists(told, max_size=2), label="lies")
        return [{"kind": kind, "worker": w % (workers + 2)} for kind, w in chosen]


def _params(mode: FaultMode) -> dict[str, int]:
    return {"after_reads": 2} if mode is FaultMode.WITHHELD_VISIBILITY else {}


def _reached(schedule: FaultSchedule, history: History) -> set[tuple[str, str, str]]:
    """(boundary, ledger status of the crashed step's effect, faults) of each crash of a run."""
    status = {e.step: e.status for e in history.effects}
    faults = "+".join(sorted({f"{r.operation}:{r.mode}" for r in schedule.network.rules})) or "-"
    return {(c.boundary, str(status.get(c.step or "", "none")), faults) for c in schedule.crashes}


class _Violation(Exception):
    """A run judged false: Hypothesis shrinks the example that raised it."""


class _Spent(BaseException):
    """The budget is spent: ends the search at once (not a failure to shrink)."""
