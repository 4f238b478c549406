"""The plan: which runs a campaign makes, as a pure function of what its runs have shown.

A scenario's fault-free recording names the boundary hits (so a boundary added tomorrow is
crashed tomorrow) and the mutating requests; the recoveries of the single crashes name the
hits a second death or a second worker can meet. From those and the options, the plan is one
single crash per hit (the riskiest first, see `crash_risk`), two workers after each single (the
first paused at its lease, and at each place its recovery can still act stale, `pauses`) and a
second crash in each recovery (all while they fit `double_limit`, a seeded sample beyond),
each network fault mode on each mutating request, and the scenario's named cases; a sample of
them beside neighbours (`harness.neighbour_plan`). No world, no I/O: histories come in as data,
planned runs go out as schedules.

The campaign runs the plan scenario by scenario and judges each run (`Plan.scenario_runs`), a
shard takes every n-th of the runs it may split (`in_shard`), a hunt runs the same runs
smallest first (`Plan.smallest_first`), and the Hypothesis strategies and the stateful
machine draw from its menu (`harness.recording`, re-exported here).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from killpoint.fake_services.faults import FaultPlan, FaultRule
from killpoint.harness.contract import boundaries as b
from killpoint.harness.deploy_plan import deploy_runs
from killpoint.harness.ground_truth import MUTATIONS
from killpoint.harness.history import History, HitRecord
from killpoint.harness.lies import sampled
from killpoint.harness.neighbour_plan import beside_named, beside_singles
from killpoint.harness.recording import (
    CHECKPOINT_DONE,
    DEDUPING,
    NETWORK_MODES,
    ROUTINE,
    STALE_WINDOWS,
    Recovery,
    Risk,
    Target,
    crash_risk,
    first_hits,
    network_modes,
    point,
    recovery,
    recovery_only,
    recovery_points,
    stale_windows,
    targets,
)
from killpoint.harness.results import RunKind
from killpoint.harness.scenario import Expect, Scenario
from killpoint.harness.schedule import FaultSchedule, Interleave, Lie, Tier

__all__ = [
    "DEDUPING",
    "NETWORK_MODES",
    "ROUTINE",
    "STALE_WINDOWS",
    "Plan",
    "PlanOptions",
    "PlannedRun",
    "Recovery",
    "Risk",
    "Target",
    "crash_risk",
    "first_hits",
    "network_modes",
    "point",
    "recovery",
    "recovery_only",
    "recovery_points",
    "singles",
    "stale_windows",
    "targets",
]


@dataclass(frozen=True)
class PlanOptions:
    """What shapes a plan besides what the runs showed (a campaign's options, in short)."""

    tier: Tier = "inprocess"
    seed: int = 0
    double_limit: int = 150  # paired crashes (and interleavings) per scenario; beyond: a sample
    double: bool = True
    interleave: bool = True  # in the in-process tier only…
    network: bool = True
    named: bool = True
    deploys: bool = False  # a deploy campaign's runs too (`harness.deploy_plan`)
    real_pairs: bool = False  # …but for an engine of one worker per process, in the real tier
    lies: bool = True  # a sample of single crashes is told lying start messages (`harness.lies`)
    neighbours: bool = True  # a sample of runs beside neighbours (`harness.neighbour_plan`)
    pauses: bool = True  # with the pairs: the first recoverer paused where it can act stale

    @property
    def pairs(self) -> bool:
        """Whether two workers recover at once: asked, and in the in-process tier (or the
        real tier's, for an engine of one worker per process)."""
        return self.interleave and (self.tier == "inprocess" or self.real_pairs)


@dataclass(frozen=True)
class PlannedRun:
    """One run of the plan: what to run, what kind of run it is, what else to judge it by."""

    scenario: Scenario
    kind: RunKind
    schedule: FaultSchedule
    expect: Expect | None = None  # a named case's expected recovery
    hit: HitRecord | None = None  # the recording's hit a single crash dies at
    risk: Risk | None = None  # a single crash's risk


# -- the phases ------------------------------------------------------------------------------


def clean(scenario: Scenario) -> PlannedRun:
    """The fault-free recording every later phase is planned from."""
    return PlannedRun(scenario, "clean", FaultSchedule(scenario=scenario.name, run_id="clean"))


def single_crashes(scenario: Scenario, recording: History) -> list[PlannedRun]:
    """One run per hit of the recording's first worker, crashing it there, in the order of the
    hits; each keeps the hit's position as its name (`single-<n>`)."""
    risks = crash_risk(recording)
    return [
        PlannedRun(
            scenario,
            "single",
            FaultSchedule(scenario=scenario.name, run_id=f"single-{n}", crashes=(point(hit),)),
            hit=hit,
            risk=risks[n],
        )
        for n, hit in enumerate(first_hits(recording))
    ]


def singles(
    scenario: Scenario, recording: History, options: PlanOptions | None = None
) -> list[PlannedRun]:
    """The single crashes, the riskiest first, in the order of the hits within a risk; with
    `options` that ask for lies, a sample of them told lying start messages."""
    runs = single_crashes(scenario, recording)
    if options is not None and options.lies:
        risks = [int(risk) for risk in crash_risk(recording)]
        told = sampled(scenario, first_hits(recording), risks, options.seed)
        runs = [_told(run, told.get(n, ())) for n, run in enumerate(runs)]
    return sorted(runs, key=_risk)


def _told(run: PlannedRun, lies: tuple[Lie, ...]) -> PlannedRun:
    if not lies:
        return run
    return replace(run, schedule=run.schedule.model_copy(update={"lies": lies}))


def _risk(run: PlannedRun) -> int:
    return -1 if run.risk is None else int(run.risk)


def in_hit_order(recoveries: Iterable[Recovery]) -> list[Recovery]:
    """Single crashes and their recoveries in the order of the hits they crashed: paired
    crashes and interleavings follow the first crash's place in the workflow, not its risk,
    since what they add is a second death or worker in the recovery, whose risk the first
    crash's boundary does not tell (two workers after a crash at the lease are where a
    missing fencing token shows)."""
    return sorted(recoveries, key=lambda r: r.position)


def _chosen(
    scenario: Scenario,
    recoveries: Iterable[Recovery],
    options: PlanOptions,
    total: int,
    kind: str,
    among: Callable[[Recovery], list[int]] | None = None,
) -> Iterator[tuple[Recovery, int]]:
    """Per single crash in hit order, which of its recovery's hits (numbered from 0; `among`
    those, if given) to use: all while they fit the scenario's share of `double_limit`, else a
    sample seeded by the single alone, so a shard makes of its singles what the whole campaign
    makes of them."""
    cap = _cap(options, total)
    for rec in in_hit_order(recoveries):
        chosen = list(range(len(rec.hits))) if among is None else among(rec)
        if len(chosen) > cap:
            salt = "" if kind == "double" else f":{kind}"
            rng = random.Random(f"{options.seed}:{scenario.name}:{rec.single.run_id}{salt}")
            chosen = sorted(rng.sample(chosen, cap))
        yield from ((rec, n) for n in chosen)


def _cap(options: PlanOptions, total: int) -> int:
    """How many of its recovery's hits each single gets, in each phase drawn from them."""
    return max(1, math.ceil(options.double_limit / (total or 1)))


def _guessed_pauses(hits: Sequence[HitRecord]) -> list[int]:
    """Per hit, a guess at the pauses of a recovery from a crash there, before it is seen: the
    windows of the crash's step (`stale_windows`) from the crash on (the effects resolved
    before it are not sent again) and its reads from the step's beginning (a read is made
    again), and a reconciling lookup if the crash left an effect started and not resolved."""
    start, doubt, found = 0, False, []
    for n, hit in enumerate(hits):
        if hit.boundary == CHECKPOINT_DONE:
            start = n + 1
        doubt = hit.boundary in (b.STARTED_COMMITTED, b.RESPONSE_READ) or (
            doubt and hit.boundary != b.RECEIPT_COMMITTED
        )
        again = [
            h for k, h in enumerate(hits[start:], start) if k >= n or h.boundary == b.READ_RETURNED
        ]
        found.append(len(stale_windows(again)) + doubt)
    return found


def doubles(
    scenario: Scenario, recoveries: Iterable[Recovery], options: PlanOptions, singles_total: int
) -> Iterator[PlannedRun]:
    """A second crash in each first recovery, at the j-th hit of that recovery."""
    for rec, j in _chosen(scenario, recoveries, options, singles_total, "double"):
        first = rec.single
        update = {"run_id": f"double-{rec.name}-{j}", "crashes": (*first.crashes, rec.hits[j])}
        yield PlannedRun(scenario, "double", first.model_copy(update=update))


def interleavings(
    scenario: Scenario, recoveries: Iterable[Recovery], options: PlanOptions, singles_total: int
) -> Iterator[PlannedRun]:
    """After a single crash, two workers recover at once: the first takes the lease and is
    paused past its expiry, the second runs k boundary hits (k = 1 .. the recovery's length),
    then the first wakes up and carries on. They are threads of the in-process tier; only for
    an engine that runs one worker per process (DBOS), which cannot have two there, are they
    two worker processes of the real tier."""
    if not options.pairs:
        return
    for rec, n in _chosen(scenario, recoveries, options, singles_total, "pair"):
        pair = Interleave(after_worker=0, switch_at=(0, n + 1), pause_expires_lease=True)
        update = {"run_id": f"pair-{rec.name}-{n + 1}", "interleave": pair}
        yield PlannedRun(scenario, "pair", rec.single.model_copy(update=update))


def pauses(
    scenario: Scenario,
    recoveries: Iterable[Recovery],
    options: PlanOptions,
    singles_total: int,
    started: bool | None = None,
) -> Iterator[PlannedRun]:
    """After a single crash, two workers recover at once, the first paused right after a hit
    where a stale owner can still act (`STALE_WINDOWS`: an effect's `started`, a read, a
    reconciling lookup, a response read before its receipt) and past its lease's expiry; the
    second takes over and runs to its end; then the first wakes up. An engine that checks its
    lease only at its store's writes sends, from `started`, an effect the new owner already
    resolved. A pair per such hit of each recovery (`pause-<single>-<hit>`), as many as the
    pairs at the lease may have (`double_limit`'s share, a sample seeded per single beyond).
    `started` True or False keeps only the pauses at an effect's `started`, or only the others
    (a hunt makes the former first: the one window the store's fence cannot close)."""
    if not (options.pauses and options.pairs):
        return
    chosen = _chosen(scenario, recoveries, options, singles_total, "pause", Recovery.stale_windows)
    for rec, n in chosen:
        if started is not None and (rec.hits[n].boundary == b.STARTED_COMMITTED) != started:
            continue
        pair = Interleave(after_worker=0, switch_at=(n,), pause_expires_lease=True)
        update = {"run_id": f"pause-{rec.name}-{n}", "interleave": pair}
        yield PlannedRun(scenario, "pair", rec.single.model_copy(update=update))


def network(scenario: Scenario, recording: History) -> Iterator[PlannedRun]:
    """Each mutating request of the recording, met by each network fault mode."""
    seen: Counter[tuple[str, str]] = Counter()
    run_ids = (f"net-{n}" for n in itertools.count())
    for request in recording.requests:
        service, operation = target = (request.service, request.operation)
        if target not in MUTATIONS:
            continue
        seen[target] += 1
        for mode in network_modes(service, operation):
            rule = FaultRule(
                service=service, operation=operation, occurrence=seen[target], mode=mode
            )
            plan = FaultPlan.of(rule)
            schedule = FaultSchedule(scenario=scenario.name, run_id=next(run_ids), network=plan)
            yield PlannedRun(scenario, "network", schedule)


def named(scenario: Scenario, options: PlanOptions) -> Iterator[PlannedRun]:
    """The named cases the scenario brings, in the plan's tier (two-worker cases included: a
    pair of worker processes takes turns on a baton in shared memory)."""
    for case in scenario.cases:
        yield PlannedRun(scenario, "named", case.schedule, case.expect)


def in_shard(index: int, shard: tuple[int, int] | None) -> bool:
    """Whether the `index`-th run a shard may split (from 0) is shard (i, n)'s: every n-th
    from i. Always true unsharded."""
    return shard is None or index % shard[1] == shard[0] - 1


# -- the plan, as it unfolds -----------------------------------------------------------------


@dataclass
class Plan:
    """The plan for some scenarios, unfolding as its runs are observed.

    Whoever runs it tells it what each planned run showed (`observe`) before asking for the
    next one: the recording plans the singles and the network faults, each single's recovery
    its pairs and doubles. Sharded, the runs a shard may split (singles, network faults, named
    cases, extra runs) are counted over the whole plan and this shard takes every n-th; every
    shard makes each recording, and the pairs and doubles of the singles it made.
    """

    scenarios: Sequence[Scenario]
    options: PlanOptions = field(default_factory=PlanOptions)
    shard: tuple[int, int] | None = None
    recordings: dict[str, History] = field(default_factory=dict)
    recoveries: dict[str, list[Recovery]] = field(default_factory=dict)
    _splittable: int = field(default=0, init=False, repr=False)  # runs a shard may split, so far

    def observe(self, run: PlannedRun, history: History) -> None:
        """What later phases need from a run: the recording, each single's recovery."""
        name = run.scenario.name
        if run.kind == "clean":
            self.recordings[name] = history
        elif run.kind == "single":  # its pairs and doubles are told no lie
            single = run.schedule.model_copy(update={"lies": ()})
            self.recoveries.setdefault(name, []).append(recovery(single, history))

    def singles(self, scenario: Scenario, recording: History) -> Iterator[PlannedRun]:
        """`singles` (lies told to a sample), the riskiest told none beside a neighbour unless
        the options say no."""
        runs = singles(scenario, recording, self.options)
        return beside_singles(scenario, runs) if self.options.neighbours else iter(runs)

    def named(self, scenario: Scenario) -> Iterator[PlannedRun]:
        """`named`, those at a human gate beside a neighbour unless the options say no."""
        runs = named(scenario, self.options)
        return beside_named(scenario, runs) if self.options.neighbours else runs

    def _split(self, runs: Iterable[PlannedRun]) -> Iterator[PlannedRun]:
        for run in runs:
            index, self._splittable = self._splittable, self._splittable + 1
            if in_shard(index, self.shard):
                yield run

    def scenario_runs(self, scenario: Scenario) -> Iterator[PlannedRun]:
        """One scenario's runs as a campaign makes them: the recording, the singles, two
        workers (paused at the lease, then where they can act stale) and then a second crash
        in each single's recovery, network faults, named cases."""
        name, options = scenario.name, self.options
        yield clean(scenario)
        recording = self.recordings[name]
        yield from self._split(self.singles(scenario, recording))
        made, total = self.recoveries.get(name, []), len(first_hits(recording))
        if options.interleave:
            yield from interleavings(scenario, made, options, total)
            yield from pauses(scenario, made, options, total)
        if options.double:
            yield from doubles(scenario, made, options, total)
        if options.network:
            yield from self._split(network(scenario, recording))
        if options.named:
            yield from self._split(self.named(scenario))
        if options.deploys:
            runs = deploy_runs(scenario, recording)
            yield from self._split(PlannedRun(scenario, "deploy", s) for s in runs)

    def expected_runs(self, extra: int = 0) -> int:
        """How many runs `campaign()` makes (this shard's share, with `extra` runs after the
        plan), once every recording is in: exact for what the runs so far have shown; a single
        crash whose recovery is not seen yet is taken to pass again the recording's hits from
        its crash on (its pairs, pauses and doubles are drawn from them), which is close — the
        recovery repeats the rest of the workflow, give or take a reconciliation."""
        options, taken = self.options, itertools.count()
        both = int(options.double) + int(options.pairs)
        paused = options.pauses and options.pairs

        def mine(count: int) -> list[int]:  # of the next `count` runs a shard may split
            return [k for k in range(count) if in_shard(next(taken), self.shard)]

        total = 0
        for scenario in self.scenarios:
            recording = self.recordings[scenario.name]
            hits = single_crashes(scenario, recording)
            ranked = sorted(range(len(hits)), key=lambda n: _risk(hits[n]))  # `singles` order
            seen = {r.name: r for r in self.recoveries.get(scenario.name, [])}
            first = first_hits(recording)
            guessed = _guessed_pauses(first)
            cap = _cap(options, len(hits))
            made = [ranked[k] for k in mine(len(ranked))]
            for n in made:
                rec = seen.get(str(n))
                drawn = len(rec.hits) if rec else len(hits) - n
                stale = len(rec.stale_windows()) if rec else guessed[n]
                total += both * min(cap, drawn) + paused * min(cap, stale)
            total += 1 + len(made)
            if options.network:
                total += len(mine(sum(1 for _ in network(scenario, recording))))
            if options.named:
                total += len(mine(len(scenario.cases)))
            if options.deploys:
                total += len(mine(sum(1 for _ in deploy_runs(scenario, recording))))
        return total + len(mine(extra))

    def extra_runs(self, runs: Iterable[PlannedRun]) -> Iterator[PlannedRun]:
        """Runs asked for beside the plan, after it, split between shards as the plan's are."""
        return self._split(runs)

    def smallest_first(self) -> Iterator[PlannedRun]:
        """The same runs by schedule size across every scenario (a hunt's order, unsharded):
        every recording, the named cases, every single crash (the riskiest crash points of
        every scenario before the next risk of any), network faults, the pauses at an effect's
        `started`, the other pairs, doubles."""
        yield from self.shallow()
        yield from self.stale_starts()
        yield from self.paired()

    def shallow(self) -> Iterator[PlannedRun]:
        """A hunt's first part: the recordings, named cases, single crashes, network faults."""
        chosen, options = self.scenarios, self.options
        yield from (clean(s) for s in chosen)
        if options.named:
            yield from (run for s in chosen for run in self.named(s))
        ranked = [
            (_risk(run), i, k, run)
            for i, s in enumerate(chosen)
            for k, run in enumerate(self.singles(s, self.recordings[s.name]))
        ]
        yield from (run for *_, run in sorted(ranked, key=lambda r: r[:3]))
        if options.network:
            yield from (run for s in chosen for run in network(s, self.recordings[s.name]))

    def stale_starts(self) -> Iterator[PlannedRun]:
        """Two workers after each single crash, the first paused right after an effect's
        `started` (`pauses`): few, and the one window no fence of the store's closes, so a hunt
        makes them right after the single crashes."""
        yield from self._each(((pauses, {"started": True}, self.options.interleave),))

    def paired(self) -> Iterator[PlannedRun]:
        """A hunt's later part: two workers after each single crash (paused at the lease, then
        at the other places they can act stale), then a second crash."""
        options = self.options
        yield from self._each(
            (
                (interleavings, {}, options.interleave),
                (pauses, {"started": False}, options.interleave),
                (doubles, {}, options.double),
            )
        )

    def _each(
        self,
        phases: Iterable[tuple[Callable[..., Iterator[PlannedRun]], dict[str, bool], bool]],
    ) -> Iterator[PlannedRun]:
        """Each wanted phase over every scenario in turn, from the singles' recoveries."""
        for phase, only, wanted in phases:
            if wanted:
                for s in self.scenarios:
                    made = self.recoveries.get(s.name, [])
                    total = len(first_hits(self.recordings[s.name]))
                    yield from phase(s, made, self.options, total, **only)

    def campaign(self, extra: Iterable[PlannedRun] = ()) -> Iterator[PlannedRun]:
        """Every scenario's runs in turn, then the extra runs: a campaign's order."""
        for scenario in self.scenarios:
            yield from self.scenario_runs(scenario)
        yield from self.extra_runs(extra)
