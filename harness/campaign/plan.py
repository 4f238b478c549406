"""The plan: which runs a campaign makes, as a pure function of what its runs have shown.

A scenario's fault-free recording names the boundary hits (so a boundary added tomorrow is
crashed tomorrow) and the mutating requests; the recoveries of the single crashes name the
hits a second death or a second worker can meet. From those and the options, the plan is one
single crash per hit (the riskiest first, see `crash_risk`), two workers after each single (the
first paused at its lease, and at each place its recovery can still act stale, `pauses`) and a
second crash in each recovery (all while they fit `double_limit`, a seeded sample beyond),
each network fault mode on each mutating request, and the scenario's named cases; a sample of
them beside neighbours (`neighbour_plan`); the runs of two are `pair_plan`'s, and
what a plan is made of `planned`'s. No world, no I/O: histories come in as data,
planned runs go out as schedules.

The campaign runs the plan scenario by scenario and judges each run (`Plan.scenario_runs`), a
shard takes every n-th of the runs it may split (`in_shard`), a hunt runs the same runs
smallest first (`Plan.smallest_first`), and the Hypothesis strategies and the stateful
machine draw from its menu (`recording`, re-exported here).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from killpoint.fake_services.faults import FaultPlan, FaultRule
from killpoint.harness.campaign.deploy_plan import deploy_runs
from killpoint.harness.campaign.neighbour_plan import beside_named, beside_singles
from killpoint.harness.campaign.pair_plan import (
    doubles,
    guessed_pauses,
    interleavings,
    pauses,
    share,
)
from killpoint.harness.campaign.planned import PlannedRun, PlanOptions
from killpoint.harness.campaign.recording import (
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
from killpoint.harness.checkers.ground_truth import MUTATIONS
from killpoint.harness.history import History
from killpoint.harness.lies import sampled
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, Lie

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
    "doubles",
    "first_hits",
    "interleavings",
    "network_modes",
    "pauses",
    "point",
    "recovery",
    "recovery_only",
    "recovery_points",
    "singles",
    "stale_windows",
    "targets",
]


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
            guessed = guessed_pauses(first)
            cap = share(options, len(hits))
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
