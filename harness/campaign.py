"""Campaigns: every boundary of every scenario, crashed once, crashed twice, and under faults.

For each scenario: a recording run without faults discovers the boundaries (so a boundary added
tomorrow is crashed tomorrow); then one run per boundary hit crashes the first worker there
(exhaustive single crash, the riskiest hits first: see `crash_risk`); then the recovery of each
of those runs is crashed at each of its own hits (exhaustive pairs while they fit the budget, a
seeded sample otherwise); then each mutating request is hit by each network fault mode. Every
run ends with a fault-free recovery to a terminal state, and every run is judged by the oracle.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from pathlib import Path

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.checkers import check_all
from killpoint.harness.contract import boundaries as b
from killpoint.harness.ground_truth import MUTATIONS
from killpoint.harness.history import History, HitRecord
from killpoint.harness.measures import measure
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import (
    CampaignResult,
    RunKind,
    RunResult,
    ScenarioCoverage,
    Verdict,
    combine,
)
from killpoint.harness.runner import run_schedule
from killpoint.harness.scenario import Expect, NamedCase, Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave, Tier, save_schedule
from killpoint.harness.world import World

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
    named: bool = True  # the seeds' named cases whose scenario is in the campaign
    seed: int = 0
    shard: tuple[int, int] | None = None  # (i, n): this process runs every n-th run from i
    on_run: Callable[[RunResult], None] | None = None
    extra: Sequence[tuple[RunKind, FaultSchedule]] = field(default_factory=tuple)


def label(step: str | None, boundary: str, occurrence: int) -> str:
    at = f"{step}:" if step else ""
    return f"{at}{boundary}" + (f"#{occurrence}" if occurrence > 1 else "")


class Campaign:
    def __init__(self, config: CampaignConfig) -> None:
        self.config = config
        self.world = open_world(config.tier, config.workdir / "world", config.store_url)
        self.runs: list[RunResult] = []
        self.coverage: list[ScenarioCoverage] = []
        self._counter = 0

    def close(self) -> None:
        self.world.close()

    def __enter__(self) -> Campaign:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one run -------------------------------------------------------------------------

    def _mine(self) -> bool:
        """Whether the next planned run belongs to this shard (always true unsharded)."""
        index = self._counter
        self._counter += 1
        shard = self.config.shard
        return shard is None or index % shard[1] == shard[0] - 1

    def execute(
        self,
        scenario: Scenario,
        schedule: FaultSchedule,
        kind: RunKind,
        expect: Expect | None = None,
    ) -> tuple[RunResult, History]:
        engine = self.config.engine.ref
        if schedule.tier != self.config.tier or schedule.engine != engine:
            schedule = schedule.model_copy(update={"tier": self.config.tier, "engine": engine})
        history = run_in_tier(self.world, scenario, schedule, self.config.engine)
        verdicts = check_all(history, scenario.workflow)
        if expect is not None:
            verdicts.append(expectation(history, expect))
        valid = combine(verdicts)
        schedule_file = None
        if valid is False:
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
            verdicts=verdicts,
            valid=valid,
            measures=measure(history, verdicts),
            schedule_file=schedule_file,
            history=history if valid is False else None,
        )
        self.runs.append(result)
        if self.config.on_run is not None:
            self.config.on_run(result)
        return result, history

    # -- the plan ------------------------------------------------------------------------

    def run(self) -> CampaignResult:
        started, wall = datetime.now(UTC).isoformat(timespec="seconds"), time.perf_counter()
        for scenario in self.config.scenarios:
            self.coverage.append(self._scenario(scenario))
        for kind, schedule in self.config.extra:
            scenario = next(s for s in self.config.scenarios if s.name == schedule.scenario)
            if self._mine():
                self.execute(scenario, schedule, kind)
        shard = self.config.shard
        return CampaignResult(
            engine=self.config.engine.name,
            tier=self.config.tier,
            backend=self.world.store.label,
            seed=self.config.seed,
            shard=f"{shard[0]}/{shard[1]}" if shard else None,
            started_at=started,
            duration_s=time.perf_counter() - wall,
            scenarios=self.coverage,
            runs=self.runs,
        )

    def _scenario(self, scenario: Scenario) -> ScenarioCoverage:
        name = scenario.name
        clean = FaultSchedule(scenario=name, run_id="clean")
        clean_result, recording = self.execute(scenario, clean, "clean")
        discovered = [h for h in recording.hits if h.worker == 0]
        outcomes: dict[str, str] = {}
        crashed: list[str] = []
        recoveries: list[tuple[FaultSchedule, list[HitPoint]]] = []
        for hit, schedule in singles(name, recording):
            if not self._mine():
                continue
            result, history = self.execute(scenario, schedule, "single")
            key = hit.label()
            crashed.append(key)
            outcomes[key] = _outcome(result)
            recoveries.append((schedule, recovery_points(history)))
        if self.config.interleave and self.config.tier == "inprocess":
            for schedule in self.interleavings(name, recoveries, len(discovered)):
                self.execute(scenario, schedule, "pair")
        if self.config.double:
            for schedule in self.doubles(name, recoveries, len(discovered)):
                self.execute(scenario, schedule, "double")
        if self.config.network:
            for schedule in self.network(name, recording):
                if self._mine():
                    self.execute(scenario, schedule, "network")
        if self.config.named:
            for case in self.named(scenario):
                if self._mine():
                    self.execute(scenario, case.schedule, "named", case.expect)
        runs = [r for r in self.runs if r.scenario == name]
        labels, done = [h.label() for h in discovered], set(crashed)
        return ScenarioCoverage(
            scenario=name,
            boundaries_discovered=labels,
            boundaries_crashed=[label for label in labels if label in done],  # in hit order
            runs=len(runs),
            violations=sum(1 for r in runs if r.valid is False),
            outcome_by_boundary=outcomes | {"(clean)": _outcome(clean_result)},
        )

    # -- the plan's parts, in the order a hunt runs them (see harness/hunt.py) ------------

    def named(self, scenario: Scenario) -> Iterator[NamedCase]:
        """The named cases the scenario brings that this campaign's tier can run."""
        for case in scenario.cases:
            if not (self.config.tier == "real" and case.schedule.interleave):
                yield case

    def doubles(
        self,
        name: str,
        recoveries: list[tuple[FaultSchedule, list[HitPoint]]],
        singles_total: int | None = None,
    ) -> Iterator[FaultSchedule]:
        """A second crash in each first recovery: all of them while they fit the limit, else a
        seeded sample of each recovery's hits. The choice for one single crash never depends on
        the others, so a shard makes exactly the pairs the whole campaign makes of its singles.
        """
        total = singles_total or len(recoveries) or 1
        cap = max(1, math.ceil(self.config.double_limit / total))
        for first, hits in in_hit_order(recoveries):
            chosen = list(enumerate(hits))
            if len(chosen) > cap:
                rng = random.Random(f"{self.config.seed}:{name}:{first.run_id}")
                chosen = sorted(rng.sample(chosen, cap))
            for j, second in chosen:
                yield first.model_copy(
                    update={
                        "run_id": f"double-{first.run_id.removeprefix('single-')}-{j}",
                        "crashes": (*first.crashes, second),
                    }
                )

    def interleavings(
        self,
        name: str,
        recoveries: list[tuple[FaultSchedule, list[HitPoint]]],
        singles_total: int | None = None,
    ) -> Iterator[FaultSchedule]:
        """After a single crash, two workers recover at once: the first takes the lease and is
        paused past its expiry, the second runs k boundary hits, then the first wakes up and
        carries on (k = 1 .. the recovery's length, sampled per single as `doubles` is)."""
        total = singles_total or len(recoveries) or 1
        cap = max(1, math.ceil(self.config.double_limit / total))
        for first, hits in in_hit_order(recoveries):
            ks = list(range(1, len(hits) + 1))
            if len(ks) > cap:
                rng = random.Random(f"{self.config.seed}:{name}:{first.run_id}:pair")
                ks = sorted(rng.sample(ks, cap))
            for k in ks:
                pair = Interleave(after_worker=0, switch_at=(0, k), pause_expires_lease=True)
                yield first.model_copy(
                    update={
                        "run_id": f"pair-{first.run_id.removeprefix('single-')}-{k}",
                        "interleave": pair,
                    }
                )

    def network(self, name: str, recording: History) -> Iterator[FaultSchedule]:
        """Each mutating request of the recording, met by each network fault mode."""
        seen: dict[tuple[str, str], int] = {}
        n = 0
        for request in recording.requests:
            target = (request.service, request.operation)
            if target not in MUTATIONS:
                continue
            seen[target] = seen.get(target, 0) + 1
            modes = list(NETWORK_MODES)
            if target in DEDUPING:
                modes.append(FaultMode.DUPLICATE_DELIVERY)
            for mode in modes:
                rule = FaultRule(
                    service=target[0], operation=target[1], occurrence=seen[target], mode=mode
                )
                yield FaultSchedule(scenario=name, run_id=f"net-{n}", network=FaultPlan.of(rule))
                n += 1


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
    for hit in (h for h in recording.hits if h.worker == 0):
        delivered = any(seen < seq <= hit.journal_seq for seq in mutations)
        seen = hit.journal_seq
        if delivered:
            risks.append(Risk.DELIVERED)
        else:
            risks.append(Risk.ROUTINE if hit.boundary in ROUTINE else Risk.PROTOCOL)
    return risks


def ranked_singles(
    name: str, recording: History
) -> Iterator[tuple[Risk, HitRecord, FaultSchedule]]:
    """One schedule per boundary hit of the recording's first worker, crashing it there, with
    its risk: every hit exactly once, the riskiest first, in the order of the hits within a
    risk. A schedule keeps the hit's position in the recording as its name (`single-<n>`)."""
    hits = [h for h in recording.hits if h.worker == 0]
    risks = crash_risk(recording)
    for n in sorted(range(len(hits)), key=lambda i: (risks[i], i)):
        hit = hits[n]
        point = HitPoint(worker=0, step=hit.step, boundary=hit.boundary, occurrence=hit.occurrence)
        yield risks[n], hit, FaultSchedule(scenario=name, run_id=f"single-{n}", crashes=(point,))


def in_hit_order(
    recoveries: list[tuple[FaultSchedule, list[HitPoint]]],
) -> list[tuple[FaultSchedule, list[HitPoint]]]:
    """Single crashes and their recoveries in the order of the hits they crashed (`single-<n>`).

    Paired crashes and interleavings follow the first crash's place in the workflow, not its
    risk: what they add is a second death or a second worker in the recovery, whose risk the
    first crash's boundary does not tell (two workers after a crash at the lease are where a
    missing fencing token shows)."""

    def position(recovery: tuple[FaultSchedule, list[HitPoint]]) -> tuple[int, str]:
        run_id = recovery[0].run_id
        n = run_id.removeprefix("single-")
        return (int(n), "") if n.isdigit() else (-1, run_id)

    return sorted(recoveries, key=position)


def singles(name: str, recording: History) -> Iterator[tuple[HitRecord, FaultSchedule]]:
    """One schedule per boundary hit of the recording's first worker, crashing it there, the
    riskiest first (`ranked_singles`)."""
    for _, hit, schedule in ranked_singles(name, recording):
        yield hit, schedule


def recovery_points(history: History, worker: int = 1) -> list[HitPoint]:
    """The boundary hits of one worker of a run (the first recovery by default)."""
    return [
        HitPoint(worker=h.worker, step=h.step, boundary=h.boundary, occurrence=h.occurrence)
        for h in history.hits
        if h.worker == worker
    ]


def open_world(tier: Tier, workdir: Path, store_url: str | None) -> World:
    if tier == "real":
        from killpoint.harness.realtier import open_real_world

        return open_real_world(workdir, store_url)
    return World.open(workdir, store_url)


def run_in_tier(
    world: World, scenario: Scenario, schedule: FaultSchedule, engine: EngineSpec
) -> History:
    """Run a schedule in the tier it names (a replayed schedule keeps its tier)."""
    if schedule.tier == "real":
        from killpoint.harness.realtier import run_schedule_real

        return run_schedule_real(world, scenario, schedule, engine)
    return run_schedule(world, scenario, schedule, engine)


def expectation(history: History, expect: Expect) -> Verdict:
    """The seed's expected recovery for a named case, as one more verdict; unknown when the
    case's premise could not be staged (its engine cannot tamper with its own store)."""
    unstaged = [t.kind for t in history.tampered if not t.applied]
    if unstaged:
        return Verdict(
            checker="expected_recovery",
            valid="unknown",
            summary=f"the engine under test cannot stage {', '.join(unstaged)}: nothing was "
            "tampered, so the case's recovery was not exercised",
        )
    problem = expect(history)
    if problem is None:
        return Verdict(checker="expected_recovery", valid=True)
    return Verdict(
        checker="expected_recovery",
        valid=False,
        summary=problem,
        evidence=[f"{history.schedule.describe()}: {problem}"],
    )


def _outcome(result: RunResult) -> str:
    if result.valid is False:
        return "violation"
    return "ok" if result.final_status in ("completed", "compensated") else result.final_status
