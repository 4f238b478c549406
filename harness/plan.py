"""The plan: which runs a campaign makes, as a pure function of what its runs have shown.

A scenario's fault-free recording names the boundary hits (so a boundary added tomorrow is
crashed tomorrow) and the mutating requests; the recoveries of the single crashes name the
hits a second death or a second worker can meet. From those and the options, the plan is one
single crash per hit (the riskiest first, see `crash_risk`), two workers after each single and
a second crash in each recovery (all while they fit `double_limit`, a seeded sample beyond),
each network fault mode on each mutating request, and the scenario's named cases. No world,
no I/O: histories come in as data, planned runs go out as schedules.

The campaign runs the plan scenario by scenario and judges each run (`Plan.scenario_runs`), a
shard takes every n-th of the runs it may split (`in_shard`), a hunt runs the same runs
smallest first (`Plan.smallest_first`), and the Hypothesis strategies and the stateful
machine draw from its menu (`first_hits`, `recovery_only`, `targets`, `network_modes`).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.contract import boundaries as b
from killpoint.harness.ground_truth import MUTATIONS
from killpoint.harness.history import History, HitRecord
from killpoint.harness.results import RunKind
from killpoint.harness.scenario import Expect, Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave, Tier

# Which network faults a mutating request may meet; duplicate delivery only where the service
# dedups (a non-idempotent service duplicates any duplicated request, whatever the engine does).
NETWORK_MODES = (
    FaultMode.LOST_RESPONSE,
    FaultMode.TIMEOUT_BEFORE_COMMIT,
    FaultMode.ERROR_AFTER_COMMIT,
    FaultMode.ERROR_BEFORE_COMMIT,
    FaultMode.LOST_REQUEST,
)
DEDUPING = frozenset({("payments", "create_charge"), ("payments", "refund"), ("artifacts", "put")})


def network_modes(service: str, operation: str) -> tuple[FaultMode, ...]:
    """The network faults a mutating request of (service, operation) may meet."""
    extra = (FaultMode.DUPLICATE_DELIVERY,) if (service, operation) in DEDUPING else ()
    return (*NETWORK_MODES, *extra)


@dataclass(frozen=True)
class PlanOptions:
    """What shapes a plan besides what the runs showed (a campaign's options, in short)."""

    tier: Tier = "inprocess"
    seed: int = 0
    double_limit: int = 150  # paired crashes (and interleavings) per scenario; beyond: a sample
    double: bool = True
    interleave: bool = True  # in the in-process tier only
    network: bool = True
    named: bool = True


class Risk(IntEnum):
    """How likely a crash at a boundary hit is to expose a recovery bug; lower runs first."""

    DELIVERED = 0  # a mutating request reached a service since the previous hit
    PROTOCOL = 1  # the effect protocol, recovery, artifacts, approvals, handoffs; or unknown
    ROUTINE = 2  # between steps: lease, step begin, checkpoint built and committed, reads


# Boundaries between steps, or where a step has only read or computed so far: a crash there
# leaves the durable state a step boundary leaves. Any boundary not listed here, one added
# tomorrow or another engine's own names included, is crashed with the effect protocol's.
ROUTINE = frozenset(
    {
        b.LEASE_ACQUIRED,
        b.STEP_BEGIN,
        b.INTENT_BUILT,
        b.VERIFY_READ,
        b.CHECKPOINT_BUILT,
        b.CHECKPOINT_COMMITTED,
    }
)


@dataclass(frozen=True)
class PlannedRun:
    """One run of the plan: what to run, what kind of run it is, what else to judge it by."""

    scenario: Scenario
    kind: RunKind
    schedule: FaultSchedule
    expect: Expect | None = None  # a named case's expected recovery
    hit: HitRecord | None = None  # the recording's hit a single crash dies at
    risk: Risk | None = None  # a single crash's risk


@dataclass(frozen=True)
class Recovery:
    """A single crash and the boundary hits its first recovery went through."""

    single: FaultSchedule
    hits: tuple[HitPoint, ...]

    @property
    def name(self) -> str:
        """The single crash's name without its kind: `<n>` for `single-<n>`."""
        return self.single.run_id.removeprefix("single-")

    @property
    def position(self) -> tuple[int, str]:
        """The crashed hit's place in the recording (`single-<n>`); other names first."""
        return (int(self.name), "") if self.name.isdigit() else (-1, self.single.run_id)


# -- what a recording shows ----------------------------------------------------------------


def point(hit: HitRecord | HitPoint, worker: int = 0) -> HitPoint:
    """The schedule's name for a hit, in worker number `worker`."""
    return HitPoint(worker=worker, step=hit.step, boundary=hit.boundary, occurrence=hit.occurrence)


def first_hits(recording: History) -> list[HitRecord]:
    """The boundary hits of the recording's first worker, in order: what single crashes kill."""
    return [h for h in recording.hits if h.worker == 0]


def recovery_points(history: History, worker: int = 1) -> list[HitPoint]:
    """The boundary hits of one worker of a run (the first recovery by default)."""
    return [point(h, h.worker) for h in history.hits if h.worker == worker]


def recovery(single: FaultSchedule, history: History) -> Recovery:
    """What a single crash's run shows the later phases: the hits of its first recovery."""
    return Recovery(single, tuple(recovery_points(history)))


def recovery_only(first: Sequence[HitPoint], recoveries: Iterable[Recovery]) -> list[HitPoint]:
    """Hits only a recovering worker reaches (reconciliation, say), first seen first, as
    worker 0's hits: what a later worker's crash may be drawn from besides `first`."""
    seen = {(p.step, p.boundary, p.occurrence) for p in first}
    found: list[HitPoint] = []
    for rec in recoveries:
        for hit in rec.hits:
            key = (hit.step, hit.boundary, hit.occurrence)
            if key not in seen:
                seen.add(key)
                found.append(point(hit))
    return found


@dataclass(frozen=True)
class Target:
    """A mutating request the recording saw: `count` requests of (service, operation)."""

    service: str
    operation: str
    count: int

    @property
    def key(self) -> tuple[str, str]:
        return (self.service, self.operation)

    def modes(self) -> tuple[FaultMode, ...]:
        return network_modes(self.service, self.operation)


def targets(recording: History) -> tuple[Target, ...]:
    """The mutating requests of the recording, by (service, operation), in the order first sent."""
    sent = ((r.service, r.operation) for r in recording.requests)
    counts = Counter(target for target in sent if target in MUTATIONS)  # in first-seen order
    return tuple(Target(s, o, n) for (s, o), n in counts.items())


def crash_risk(recording: History) -> list[Risk]:
    """The risk of each hit of the recording's first worker, in the order of the hits.

    A hit right after a mutating request reached a service is the lost-response window (DESIGN
    boundary 5): the outside world has changed and the engine has not recorded it yet, where
    an engine that re-runs the step sends the request twice. Seen from the service's journal,
    it needs nothing from the engine, so it holds for engines we cannot instrument. Then the
    other windows of the effect protocol (intent and `started` committed, response read and
    receipt committed, reconciliation, compensation) and the artifact, approval and handoff
    boundaries; then the routine ones, where the durable state is the one a step boundary
    leaves and a recovery simply runs the next step.
    """
    mutations = sorted(r.seq for r in recording.requests if (r.service, r.operation) in MUTATIONS)
    risks: list[Risk] = []
    seen = -math.inf
    for hit in first_hits(recording):
        delivered = any(seen < seq <= hit.journal_seq for seq in mutations)
        seen = hit.journal_seq
        routine = Risk.ROUTINE if hit.boundary in ROUTINE else Risk.PROTOCOL
        risks.append(Risk.DELIVERED if delivered else routine)
    return risks


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


def singles(scenario: Scenario, recording: History) -> list[PlannedRun]:
    """The single crashes, the riskiest first, in the order of the hits within a risk."""
    return sorted(single_crashes(scenario, recording), key=_risk)


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
    scenario: Scenario, recoveries: Iterable[Recovery], options: PlanOptions, total: int, kind: str
) -> Iterator[tuple[Recovery, int]]:
    """Per single crash in hit order, which of its recovery's hits (numbered from 0) to use:
    all while they fit the scenario's share of `double_limit`, else a sample seeded by the
    single alone, so a shard makes of its singles what the whole campaign makes of them."""
    cap = max(1, math.ceil(options.double_limit / (total or 1)))
    for rec in in_hit_order(recoveries):
        chosen = list(range(len(rec.hits)))
        if len(chosen) > cap:
            salt = "" if kind == "double" else f":{kind}"
            rng = random.Random(f"{options.seed}:{scenario.name}:{rec.single.run_id}{salt}")
            chosen = sorted(rng.sample(chosen, cap))
        yield from ((rec, n) for n in chosen)


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
    then the first wakes up and carries on. Two workers take turns in one process's memory,
    so the real tier has none."""
    if options.tier != "inprocess":
        return
    for rec, n in _chosen(scenario, recoveries, options, singles_total, "pair"):
        pair = Interleave(after_worker=0, switch_at=(0, n + 1), pause_expires_lease=True)
        update = {"run_id": f"pair-{rec.name}-{n + 1}", "interleave": pair}
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
    """The named cases the scenario brings that the plan's tier can run."""
    for case in scenario.cases:
        if not (options.tier == "real" and case.schedule.interleave):
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
        elif run.kind == "single":
            self.recoveries.setdefault(name, []).append(recovery(run.schedule, history))

    def _split(self, runs: Iterable[PlannedRun]) -> Iterator[PlannedRun]:
        for run in runs:
            index, self._splittable = self._splittable, self._splittable + 1
            if in_shard(index, self.shard):
                yield run

    def scenario_runs(self, scenario: Scenario) -> Iterator[PlannedRun]:
        """One scenario's runs as a campaign makes them: the recording, the singles, two
        workers and then a second crash in each single's recovery, network faults, named
        cases."""
        name, options = scenario.name, self.options
        yield clean(scenario)
        recording = self.recordings[name]
        yield from self._split(singles(scenario, recording))
        made, total = self.recoveries.get(name, []), len(first_hits(recording))
        if options.interleave:
            yield from interleavings(scenario, made, options, total)
        if options.double:
            yield from doubles(scenario, made, options, total)
        if options.network:
            yield from self._split(network(scenario, recording))
        if options.named:
            yield from self._split(named(scenario, options))

    def extra_runs(self, runs: Iterable[PlannedRun]) -> Iterator[PlannedRun]:
        """Runs asked for beside the plan, after it, split between shards as the plan's are."""
        return self._split(runs)

    def smallest_first(self) -> Iterator[PlannedRun]:
        """The same runs by schedule size across every scenario (a hunt's order, unsharded):
        every recording, the named cases, every single crash (the riskiest crash points of
        every scenario before the next risk of any), network faults, pairs, doubles."""
        chosen, options = self.scenarios, self.options
        yield from (clean(s) for s in chosen)
        if options.named:
            yield from (run for s in chosen for run in named(s, options))
        ranked = [
            (_risk(run), i, k, run)
            for i, s in enumerate(chosen)
            for k, run in enumerate(singles(s, self.recordings[s.name]))
        ]
        yield from (run for *_, run in sorted(ranked, key=lambda r: r[:3]))
        if options.network:
            yield from (run for s in chosen for run in network(s, self.recordings[s.name]))
        for phase, wanted in ((interleavings, options.interleave), (doubles, options.double)):
            if wanted:
                for s in chosen:
                    made = self.recoveries.get(s.name, [])
                    total = len(first_hits(self.recordings[s.name]))
                    yield from phase(s, made, options, total)

    def campaign(self, extra: Iterable[PlannedRun] = ()) -> Iterator[PlannedRun]:
        """Every scenario's runs in turn, then the extra runs: a campaign's order."""
        for scenario in self.scenarios:
            yield from self.scenario_runs(scenario)
        yield from self.extra_runs(extra)
