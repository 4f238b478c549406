"""Hypothesis strategies for fault schedules, drawn from what a scenario really does.

Crash points are never a hand-written list: a fault-free run of the scenario is recorded once
(per engine) and its boundary hits are the menu, so a boundary added to the engine tomorrow is
drawn tomorrow. Recovery-only boundaries (reconciliation, say) come from recording the recovery
of the campaign's single crash at each of those hits. Network faults target the mutating
requests that recording saw, with the modes a campaign gives them. The menu is the campaign
plan's own (`harness.campaign.plan`): what a campaign enumerates, the strategies draw from. Every
strategy shrinks towards *less*: no crash, no rule, no jump, the first boundary, the
shortest pause; so the simplest schedule of all is the fault-free one.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass

from hypothesis import strategies as st

from killpoint.contract.records import Versions
from killpoint.fake_services.faults import OPERATIONS, FaultRule
from killpoint.harness.campaign.explore import READ_MODES
from killpoint.harness.campaign.plan import (
    Target,
    first_hits,
    point,
    recovery,
    recovery_only,
    single_crashes,
    targets,
)
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import BASE_VERSIONS, World
from killpoint.harness.scenario import GatePolicy, Scenario
from killpoint.harness.schedule import (
    ClockJump,
    Deploy,
    FaultSchedule,
    HitPoint,
    Interleave,
    Tamper,
)
from killpoint.harness.tampering import TAMPER_KINDS as TAMPER_TABLE
from killpoint.scenarios import get

__all__ = [
    "Discovery",
    "clock_jumps",
    "crash_chains",
    "crash_points",
    "deploys",
    "discover",
    "fault_schedules",
    "interleavings",
    "network_rules",
    "read_rules",
    "tampers",
    "version_changes",
]

#: every kind of tampering in the harness's table
TAMPER_KINDS: tuple[str, ...] = tuple(TAMPER_TABLE)
#: fields of `Versions` a deploy may change, mildest first (a plan change quarantines)
VERSION_FIELDS = ("prompt", "model_contract", "tool_schema", "plan")
LEASE_TTL = 30.0  # `World.lease_ttl`: a jump past it lapses the lease


@dataclass(frozen=True)
class Discovery:
    """What one recording of a scenario showed: the menu every strategy draws from."""

    scenario: str
    first: tuple[HitPoint, ...]  # worker 0's hits in a fault-free run, in order
    recovery: tuple[HitPoint, ...]  # hits only a recovering worker reaches, first seen first
    targets: tuple[Target, ...]  # mutating requests, in the order first sent
    reads: tuple[tuple[str, str], ...]  # the read operations of the services it sent to
    approval_ttl: float  # longest approval a gate grants (a jump past it expires them)
    versions: Versions  # what workers run without a deploy

    @property
    def boundaries(self) -> tuple[HitPoint, ...]:
        return self.first + self.recovery

    def jump_lengths(self) -> tuple[float, ...]:
        """Lease expiry first (the smaller fault), then approval expiry."""
        return (LEASE_TTL + 1.0, self.approval_ttl + 1.0)


def _as_scenario(scenario: Scenario | str) -> Scenario:
    return get(scenario) if isinstance(scenario, str) else scenario


def discover(scenario: Scenario | str, engine: EngineSpec = REFERENCE) -> Discovery:
    """Record `scenario` under `engine` (once per process; cached) and return what it hit; a
    team's own `Scenario` object as well as a catalogue name."""
    chosen = _as_scenario(scenario)
    key = (chosen.name, id(chosen), engine)
    if key not in _DISCOVERED:  # keyed by identity: a Scenario holds dicts, so is unhashable
        _DISCOVERED[key] = (chosen, _discover(chosen, engine))
    return _DISCOVERED[key][1]


_DISCOVERED: dict[tuple[str, int, EngineSpec], tuple[Scenario, Discovery]] = {}


def _discover(scenario: Scenario, engine: EngineSpec) -> Discovery:
    name = scenario.name
    with (
        tempfile.TemporaryDirectory(prefix="killpoint-discover-") as root,
        World.open(root) as world,
    ):
        clean = run_schedule(world, scenario, FaultSchedule(scenario=name, run_id="clean"), engine)
        recoveries = [
            recovery(run.schedule, run_schedule(world, scenario, run.schedule, engine))
            for run in single_crashes(scenario, clean)
        ]
    first = tuple(point(h) for h in first_hits(clean))
    ttl = max((g.ttl_s for g in scenario.gates.values()), default=GatePolicy().ttl_s)
    return Discovery(
        scenario=name,
        first=first,
        recovery=tuple(recovery_only(first, recoveries)),
        targets=targets(clean),
        reads=reads_of(targets(clean)),
        approval_ttl=ttl,
        versions=BASE_VERSIONS.model_copy(update={"plan": scenario.workflow.plan_version}),
    )


def reads_of(sent: tuple[Target, ...]) -> tuple[tuple[str, str], ...]:
    """The read operations (lookups, verification reads) of the services a run sent to."""
    services = {t.service for t in sent}
    return tuple((s, o) for method, _, s, o in OPERATIONS if method == "GET" and s in services)


def read_rules(
    scenario: Scenario | str, engine: EngineSpec = REFERENCE
) -> st.SearchStrategy[FaultRule]:
    """One read that fails: a lookup or verification read times out or gets a 5xx."""

    def menu() -> st.SearchStrategy[FaultRule]:
        reads = discover(scenario, engine).reads
        if not reads:
            return st.nothing()
        return st.sampled_from(reads).flatmap(
            lambda r: st.builds(
                FaultRule,
                service=st.just(r[0]),
                operation=st.just(r[1]),
                occurrence=st.integers(1, 3),
                mode=st.sampled_from(READ_MODES),
            )
        )

    return st.deferred(menu)


# -- single faults --------------------------------------------------------------------------


def crash_points(
    scenario: Scenario | str, worker: int = 0, engine: EngineSpec = REFERENCE
) -> st.SearchStrategy[HitPoint]:
    """A discovered boundary hit for worker `worker`; the first worker draws only from the
    fault-free recording, later ones also from the recovery-only hits."""

    def menu() -> st.SearchStrategy[HitPoint]:
        found = discover(scenario, engine)
        hits = found.first if worker == 0 else found.boundaries
        return st.sampled_from(hits).map(lambda h: point(h, worker))

    return st.deferred(menu)


def crash_chains(
    scenario: Scenario | str, max_workers: int = 3, engine: EngineSpec = REFERENCE
) -> st.SearchStrategy[tuple[HitPoint, ...]]:
    """Crashes of workers 0, 1, … in turn: each recovery dies again, up to `max_workers`."""

    def menu() -> st.SearchStrategy[tuple[HitPoint, ...]]:
        found = discover(scenario, engine)
        return st.lists(st.sampled_from(found.boundaries), max_size=max_workers).map(
            lambda hits: tuple(point(h, worker) for worker, h in enumerate(hits))
        )

    return st.deferred(menu)


def network_rules(
    scenario: Scenario | str, engine: EngineSpec = REFERENCE
) -> st.SearchStrategy[FaultRule]:
    """One network fault: mode, a mutating request the recording saw, which occurrence."""

    def menu() -> st.SearchStrategy[FaultRule]:
        targets = discover(scenario, engine).targets
        if not targets:
            return st.nothing()
        return st.sampled_from(targets).flatmap(
            lambda t: st.builds(
                FaultRule,
                service=st.just(t.service),
                operation=st.just(t.operation),
                occurrence=st.integers(1, t.count),
                mode=st.sampled_from(t.modes()),
            )
        )

    return st.deferred(menu)


def clock_jumps(
    scenario: Scenario | str, worker: int = 0, engine: EngineSpec = REFERENCE
) -> st.SearchStrategy[ClockJump]:
    """A clock jump at a discovered hit: past the lease ttl, or past the approvals' ttl."""

    def menu() -> st.SearchStrategy[ClockJump]:
        found = discover(scenario, engine)
        return st.builds(
            ClockJump,
            at=crash_points(scenario, worker, engine),
            seconds=st.sampled_from(found.jump_lengths()),
        )

    return st.deferred(menu)


def interleavings(after_worker: int = 0, max_switches: int = 3) -> st.SearchStrategy[Interleave]:
    """Two workers recovering at once, handing over after a few global hit indices."""
    return st.builds(
        Interleave,
        after_worker=st.just(after_worker),
        switch_at=st.lists(st.integers(0, 40), max_size=max_switches, unique=True).map(
            lambda xs: tuple(sorted(xs))
        ),
        pause_expires_lease=st.booleans(),
    )


def version_changes(
    scenario: Scenario | str, engine: EngineSpec = REFERENCE
) -> st.SearchStrategy[Versions]:
    """The versions a deploy brings: one or more fields of the running versions bumped."""

    def menu() -> st.SearchStrategy[Versions]:
        base = discover(scenario, engine).versions

        def bumped(fields: list[str]) -> Versions:
            return base.model_copy(update={f: f"{getattr(base, f)}+deploy" for f in fields})

        return st.lists(st.sampled_from(VERSION_FIELDS), min_size=1, max_size=2, unique=True).map(
            bumped
        )

    return st.deferred(menu)


def deploys(
    scenario: Scenario | str, from_worker: int = 1, engine: EngineSpec = REFERENCE
) -> st.SearchStrategy[Deploy]:
    return st.builds(
        Deploy,
        from_worker=st.just(from_worker),
        versions=version_changes(scenario, engine),
    )


def tampers(after_worker: int = 0) -> st.SearchStrategy[Tamper]:
    return st.builds(Tamper, after_worker=st.just(after_worker), kind=st.sampled_from(TAMPER_KINDS))


# -- whole schedules ------------------------------------------------------------------------


@st.composite
def _schedules(
    draw: st.DrawFn, scenario: str, engine: EngineSpec, run_id: str, max_crashes: int
) -> FaultSchedule:
    crashes = draw(crash_chains(scenario, max_crashes, engine))
    # faults between workers name a worker that exists: one of those the chain kills, or the
    # first recovery
    last = len(crashes)
    network = draw(
        st.lists(
            network_rules(scenario, engine) | read_rules(scenario, engine),
            max_size=2,
            unique_by=lambda r: (r.service, r.operation, r.occurrence),
        )
    )
    jumps = draw(
        st.lists(
            st.integers(0, last).flatmap(lambda w: clock_jumps(scenario, w, engine)),
            max_size=2,
            unique_by=lambda j: (j.at.worker, j.at.step, j.at.boundary, j.at.occurrence),
        )
    )
    tamper = draw(st.lists(st.integers(0, last).flatmap(tampers), max_size=1))
    deploy = draw(
        st.lists(
            st.integers(1, last + 1).flatmap(lambda w: deploys(scenario, w, engine)), max_size=1
        )
    )
    interleave = draw(st.none() | st.integers(0, last).flatmap(interleavings))
    redeliver = draw(st.booleans())
    after_end = draw(st.booleans())
    return FaultSchedule.model_validate(
        {
            "scenario": scenario,
            "run_id": run_id,
            "crashes": crashes,
            "network": {"rules": network},
            "clock_jumps": jumps,
            "tamper": tamper,
            "deploys": deploy,
            "interleave": interleave,
            "redeliver_start": redeliver,
            "redeliver_after_end": after_end,
        }
    )


def fault_schedules(
    scenario: Scenario | str,
    engine: EngineSpec = REFERENCE,
    run_id: str = "generated",
    max_crashes: int = 3,
) -> st.SearchStrategy[FaultSchedule]:
    """A whole fault schedule for `scenario`; it shrinks towards `FaultSchedule(scenario)`."""
    return _schedules(_as_scenario(scenario).name, engine, run_id, max_crashes)
