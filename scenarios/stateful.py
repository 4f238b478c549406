"""A Hypothesis state machine that crashes, races, delays and tampers with one run at a time.

Each rule is one thing that can happen to a durable workflow between or inside workers; the
machine drives the harness's own `Run` worker by worker and writes every rule into a
`FaultSchedule` as it goes, so whatever it finds is a schedule `run_schedule` replays to the
same history. After every step the oracle's safety checkers judge the history so far; progress
is judged once, at teardown, after fault-free workers have run the workflow to its end (as
`Run.execute` would). Rules take plain values (indices into the recording's menu, mode names),
so Hypothesis prints a failure as a short program that runs pasted beside the machine; the
machine adds the schedule's non-default fields and the replay command, and keeps the failure
in `failures` for tests to inspect.

Usage, for a team's own scenario and engine (any engine `run_campaign` takes)::

    class CheckoutMachine(machine_for(CHECKOUT, engine="my_engine:factory")):
        @invariant()
        def my_check(self) -> None: ...  # self.run.history(), self.schedule, self.world

    TestCheckout = CheckoutMachine.TestCase
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from killpoint.fake_services import FaultPlan, InProcessServices, ServiceClock
from killpoint.fake_services.faults import FaultMode, FaultRule
from killpoint.harness.campaign.explore import READ_MODES
from killpoint.harness.campaign.launch import resolve_engine, resolve_scenarios
from killpoint.harness.campaign.plan import Target
from killpoint.harness.checkers import CHECKERS
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History, WorkerRecord
from killpoint.harness.protocol import EngineSpec, StoreHandle
from killpoint.harness.results import Verdict
from killpoint.harness.run.interleave import run_pair
from killpoint.harness.run.runner import Run
from killpoint.harness.run.world import EPOCH, TENANT, SharedTime, World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import (
    ClockJump,
    Deploy,
    FaultSchedule,
    HitPoint,
    Interleave,
    Tamper,
)
from killpoint.scenarios import get
from killpoint.scenarios._machine_report import SCHEDULE_DIR_ENV, Failure, save, summary
from killpoint.scenarios._machine_world import DecisionTally, shared_store
from killpoint.scenarios.strategies import TAMPER_KINDS, VERSION_FIELDS, discover

__all__ = ["SCHEDULE_DIR_ENV", "Failure", "KillpointMachine", "machine_for"]

#: workers the machine may spend on faults; the rest of `max_workers` is left for recovery
FAULTY_WORKERS = 7
SAFETY = {name: check for name, check in CHECKERS.items() if name != "progress"}
#: rules pick the i-th hit (request, read) of the menu, modulo its length: it shrinks to the first
INDEX = st.integers(0, 15)


class KillpointMachine(RuleBasedStateMachine):
    """One run of `scenario` under `engine`, with faults chosen step by step.

    A subclass may set `scenario` (a `Scenario` or a catalogue name) and `engine` (anything
    `run_campaign` takes) and add `@rule`s, `@invariant`s and `@initialize`s; they see
    `self.scenario`, `self.engine`, `self.world` (store, services, clock), `self.run` (the
    harness's `Run`: `self.run.history()` is the history so far), `self.schedule` (the
    `FaultSchedule` built so far), `self.found` (the recording's menu), `self.next_worker` and
    `self.done` (the last worker stopped in a terminal state). `finished(history)` is called
    with the whole history of a run the oracle passed.
    """

    scenario: ClassVar[Scenario] = get("order_saga")
    engine: ClassVar[EngineSpec] = REFERENCE
    failures: ClassVar[list[Failure]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        given: Any = cls.__dict__.get("scenario")
        if isinstance(given, str):
            cls.scenario = resolve_scenarios(given)[0]
        if "engine" in cls.__dict__ and not isinstance(cls.__dict__["engine"], EngineSpec):
            cls.engine = resolve_engine(cls.__dict__["engine"])
        if "failures" not in cls.__dict__:
            cls.failures = []

    def __init__(self) -> None:
        super().__init__()
        self.found = discover(self.scenario, self.engine)
        # a fresh world per example (its own services, clock from the epoch, artifact folder),
        # over one store per process: runs are apart by run id, and building the schema for
        # every example would cost more than the example
        self.root = Path(tempfile.mkdtemp(prefix="killpoint-machine-"))
        clock = ServiceClock(start=EPOCH)
        services = InProcessServices(clock=clock)
        shared = shared_store()
        self.world = World(
            store=StoreHandle(shared.url, self.root, TENANT, shared.label, shared=shared.shared),
            services=services,
            clock=SharedTime(clock),
        )
        if self.engine.reset is not None:  # nothing of an earlier example: its replay's world
            self.engine.reset(self.world.store)
        self.tally = DecisionTally(services)
        run_id = f"stateful-{next(_RUNS)}"
        # the services' draws are seeded alike in every example (the run id differs, the
        # choices must not), and the schedule names the seed so that a replay draws the same
        network = FaultPlan(seed=MACHINE_SEED)
        services.set_plan(network)
        self.run = Run(
            self.world,
            self.scenario,
            FaultSchedule(
                scenario=self.scenario.name, run_id=run_id, engine=self.engine.ref, network=network
            ),
            self.engine,
        )
        self.next_worker = 0
        self.done = False  # the last worker (or pair) stopped in a terminal state
        self.failed = False
        self.judged = 0  # workers the oracle has seen

    # -- the schedule, as built so far -----------------------------------------------------

    @property
    def schedule(self) -> FaultSchedule:
        return self.run.schedule

    def _add_rule(self, rule_: FaultRule) -> None:
        """The schedule's network faults and this one, under the machine's one seed."""
        plan = FaultPlan(rules=(*self.schedule.network.rules, rule_), seed=MACHINE_SEED)
        self._extend(network=plan)
        self.tally.install(plan)

    def _extend(self, **changes: Any) -> None:
        self.run.schedule = self.schedule.model_copy(update=changes)

    def _may_run(self) -> bool:
        """Whether `Run.execute` would start another worker now (so a replay does too)."""
        if self.next_worker >= FAULTY_WORKERS:
            return False
        return not self.done or self.run.more_scheduled(self.next_worker - 1)

    def _next(self, record: WorkerRecord) -> None:
        self.next_worker = record.worker + 1
        self.done = record.end == "stopped" and _terminal(record.status)

    def _worker(self) -> WorkerRecord:
        """Run the next worker, after the previous gap (downtime, tampering) as execute does."""
        if self.next_worker > 0:
            self.run.between(self.next_worker - 1)
        record = self.run.run_worker(self.next_worker)
        self._next(record)
        _note(f"# worker {record.worker}: {record.end} {record.status or ''} {record.reason}")
        return record

    # -- rules ------------------------------------------------------------------------------

    @precondition(lambda self: self._may_run())
    @rule()
    def run_worker(self) -> None:
        """A worker runs to its end: the run's state, or its first death."""
        self._worker()

    @precondition(lambda self: self._may_run())
    @rule(at=INDEX)
    def crash_worker(self, at: int) -> None:
        """A worker runs and dies at a discovered boundary hit (the `at`-th, cyclically)."""
        hits = self.found.first if self.next_worker == 0 else self.found.boundaries
        hit = hits[at % len(hits)]
        point = hit.model_copy(update={"worker": self.next_worker})
        self._extend(crashes=(*self.schedule.crashes, point))
        self._worker()

    @precondition(
        lambda self: (
            self.next_worker > 0
            and self.schedule.interleave is None
            and self.next_worker + 1 < FAULTY_WORKERS
            and self._may_run()
        )
    )
    @rule(
        switch_at=st.lists(st.integers(0, 40), max_size=3, unique=True),
        pause_expires_lease=st.booleans(),
    )
    def recover_concurrently(self, switch_at: list[int], pause_expires_lease: bool) -> None:
        """Two workers recover at once, handing over at these global hit indices (maybe after
        a pause long enough for the waiting one's lease to lapse)."""
        pair = Interleave(
            after_worker=self.next_worker - 1,
            switch_at=tuple(sorted(switch_at)),
            pause_expires_lease=pause_expires_lease,
        )
        self._extend(interleave=pair)
        first = self.next_worker
        self.run.between(first - 1)
        records = run_pair(self.run, first, pair.switch_at, pair.pause_expires_lease)
        for record in sorted(records, key=lambda r: r.worker):
            _note(f"# worker {record.worker}: {record.end} {record.status or ''} {record.reason}")
        self.next_worker = first + 2
        self.done = any(r.end == "stopped" and _terminal(r.status) for r in records)

    @precondition(lambda self: self._may_run())
    @rule(at=INDEX, past=st.sampled_from(("lease", "approval")))
    def advance_clock(self, at: int, past: str) -> None:
        """The clock jumps inside the next worker, past the lease ttl or the approvals' ttl."""
        hit = self.found.boundaries[at % len(self.found.boundaries)]
        seconds = self.found.jump_lengths()[past == "approval"]
        point = HitPoint(
            worker=self.next_worker,
            step=hit.step,
            boundary=hit.boundary,
            occurrence=hit.occurrence,
        )
        if any(j.at == point for j in self.schedule.clock_jumps):
            return
        jump = ClockJump(at=point, seconds=seconds)
        self._extend(clock_jumps=(*self.schedule.clock_jumps, jump))

    @precondition(lambda self: bool(self.found.targets) and self._may_run())
    @rule(request=INDEX, mode=INDEX, ahead=st.integers(1, 2))
    def inject_network_fault(self, request: int, mode: int, ahead: int) -> None:
        """One of the next requests (`ahead`) of a mutating operation (the `request`-th the
        recording sent) meets a network fault (the `mode`-th its service allows)."""
        sent: Target = self.found.targets[request % len(self.found.targets)]
        modes = sent.modes()
        chosen: FaultMode = modes[mode % len(modes)]
        rule_ = FaultRule(
            service=sent.service,
            operation=sent.operation,
            occurrence=self.tally.counts[sent.key] + ahead,
            mode=chosen,
        )
        if any(
            (r.service, r.operation, r.occurrence)
            == (rule_.service, rule_.operation, rule_.occurrence)
            for r in self.schedule.network.rules
        ):
            return
        self._add_rule(rule_)

    @precondition(lambda self: self.next_worker > 0 and self._may_run())
    @rule(bump=st.lists(st.sampled_from(VERSION_FIELDS), min_size=1, max_size=2, unique=True))
    def deploy(self, bump: list[str]) -> None:
        """A new version (prompt, model contract, tool schema or plan) is deployed: every worker
        from the next one on runs it."""
        base = self.found.versions
        versions = base.model_copy(update={f: f"{getattr(base, f)}+deploy" for f in bump})
        deploy = Deploy(from_worker=self.next_worker, versions=versions)
        kept = tuple(d for d in self.schedule.deploys if d.from_worker != self.next_worker)
        self._extend(deploys=(*kept, deploy))

    # one tampering per run: tamper kinds rewrite a sound checkpoint, not an altered one
    @precondition(lambda self: 0 < self.next_worker < FAULTY_WORKERS and not self.schedule.tamper)
    @rule(kind=st.sampled_from(TAMPER_KINDS))
    def tamper(self, kind: str) -> None:
        """The stored checkpoint (or an artifact) is altered before the next worker starts."""
        stamp = Tamper.model_validate({"after_worker": self.next_worker - 1, "kind": kind})
        self._extend(tamper=(stamp,))

    @precondition(lambda self: bool(self.found.reads) and self._may_run())
    @rule(read=INDEX, mode=st.sampled_from([str(m) for m in READ_MODES]), ahead=st.integers(1, 2))
    def fail_a_read(self, read: int, mode: str, ahead: int) -> None:
        """One of the next reads (`ahead`) of a service (the `read`-th lookup or verification
        read of the services the recording sent to) times out or gets a 5xx."""
        service, operation = self.found.reads[read % len(self.found.reads)]
        occurrence = self.tally.counts[(service, operation)] + ahead
        taken = {(r.service, r.operation, r.occurrence) for r in self.schedule.network.rules}
        if (service, operation, occurrence) in taken:
            return
        rule_ = FaultRule(
            service=service, operation=operation, occurrence=occurrence, mode=FaultMode(mode)
        )
        self._add_rule(rule_)

    @precondition(lambda self: not self.schedule.redeliver_after_end)
    @rule()
    def redeliver_after_end(self) -> None:
        """Once the run has ended, the queue delivers its start message again."""
        self._extend(redeliver_after_end=True)

    @precondition(lambda self: self.next_worker <= 1 and not self.schedule.redeliver_start)
    @rule()
    def redeliver_start(self) -> None:
        """The queue redelivers the start message: every later worker receives it again."""
        self._extend(redeliver_start=True)

    @precondition(lambda self: not self._may_run())
    @rule()
    def settle(self) -> None:
        """Nothing happens: the run is over (a replay would start no further worker)."""

    # -- the oracle ---------------------------------------------------------------------------

    @invariant()
    def oracle_holds(self) -> None:
        """Safety, on the history so far, after every step."""
        if self.failed or self.next_worker == self.judged:
            return  # nothing ran since the last judgement: the history is the same
        self.judged = self.next_worker
        history = self.run.history()
        verdicts = [check(history, self.scenario.workflow) for check in SAFETY.values()]
        if any(v.valid is False for v in verdicts):
            self._fail()

    def teardown(self) -> None:
        try:
            if not self.failed:
                history = self._finish()
                verdicts = [check(history, self.scenario.workflow) for check in CHECKERS.values()]
                if any(v.valid is False for v in verdicts):
                    self._report(history, verdicts)
                self.finished(history)
        finally:
            self.world.services.close()
            shutil.rmtree(self.root, ignore_errors=True)

    def finished(self, history: History) -> None:
        """Called with the whole history of a run the oracle passed (a seam for tests)."""

    def _finish(self) -> History:
        """Fault-free workers until the run is terminal, exactly as `Run.execute` goes on."""
        max_workers = self.schedule.max_workers
        while self.next_worker < max_workers:
            if (
                self.next_worker > 0
                and self.done
                and not self.run.more_scheduled(self.next_worker - 1)
                and not self.run.redeliver_now()  # as `Run.execute`: one more worker, if due
            ):
                return self.run.history()
            self._worker()
        self.run.between(self.next_worker - 1)
        return self.run.history()

    def _fail(self) -> None:
        self.failed = True
        history = self._finish()
        verdicts = [check(history, self.scenario.workflow) for check in CHECKERS.values()]
        self._report(history, verdicts)

    def _report(self, history: History, verdicts: list[Verdict]) -> None:
        self.failed = True
        schedule = self.schedule
        path = save(schedule)
        type(self).failures.append(Failure(schedule, history, verdicts, path))
        broken = [f"{v.checker}: {v.summary}" for v in verdicts if v.valid is False]
        raise AssertionError(
            "oracle violated: " + "; ".join(broken) + "\n" + summary(path, schedule, self.scenario)
        )


_RUNS = itertools.count()
MACHINE_SEED = "stateful"  # the seed of the services' realism draws in every example


def _note(text: str) -> None:
    """A note in Hypothesis's report; printed when the program runs pasted, outside a test."""
    if currently_in_test_context():
        note(text)
    else:
        print(text)


def _terminal(status: str | None) -> bool:
    return status is not None and status not in ("running", "waiting_approval")


def machine_for(
    scenario: Scenario | str,
    engine: str | EngineSpec | Callable[..., Any] | None = None,
    name: str | None = None,
) -> type[KillpointMachine]:
    """A `KillpointMachine` subclass for one scenario (a team's own `Scenario`, or a catalogue
    name) and one engine under test (`"module:factory"`, `"mutant:NAME"`, an `EngineSpec` or a
    factory, as `run_campaign` takes; the reference engine by default)."""
    chosen = resolve_scenarios(scenario)[0]
    spec = resolve_engine(engine)
    discover(chosen, spec)  # fail at collection for a scenario that cannot run, not mid-run
    attrs: dict[str, Any] = {
        "scenario": chosen,
        "engine": spec,
        "failures": [],
        "__doc__": f"{chosen.name} under the {spec.name} engine",
    }
    label = name or "".join(p.title() for p in f"{chosen.name}_{spec.name}".split("_"))
    return type(f"{label}Machine", (KillpointMachine,), attrs)
