"""A Hypothesis state machine that crashes, races, delays and tampers with one run at a time.

Each rule is one thing that can happen to a durable workflow between or inside workers; the
machine drives the harness's own `Run` worker by worker and writes every rule into a
`FaultSchedule` as it goes, so whatever it finds is a schedule `run_schedule` replays to the
same history. After every step the oracle's safety checkers judge the history so far; progress
is judged once, at teardown, after fault-free workers have run the workflow to its end (as
`Run.execute` would). On a violation the machine prints the schedule JSON and the
`killpoint replay` command, and keeps the failure in `failures` for tests to inspect.

Usage::

    TestOrderSaga = machine_for("order_saga").TestCase
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from killpoint.fake_services import FaultPlan, InProcessServices, ServiceClock
from killpoint.fake_services.faults import FaultMode, FaultRule
from killpoint.harness.checkers import CHECKERS
from killpoint.harness.contract.records import Versions
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.explore import READ_MODES
from killpoint.harness.history import History, WorkerRecord
from killpoint.harness.interleave import run_pair
from killpoint.harness.plan import Target
from killpoint.harness.protocol import EngineSpec, StoreHandle
from killpoint.harness.results import Verdict
from killpoint.harness.runner import Run
from killpoint.harness.schedule import (
    ClockJump,
    Deploy,
    FaultSchedule,
    HitPoint,
    Tamper,
    save_schedule,
)
from killpoint.harness.world import EPOCH, TENANT, SharedTime, World
from killpoint.scenarios import get
from killpoint.scenarios._machine_world import DecisionTally, shared_store
from killpoint.scenarios.strategies import TAMPER_KINDS, discover, interleavings, version_changes

__all__ = ["Failure", "KillpointMachine", "machine_for"]

SCHEDULE_DIR_ENV = "KILLPOINT_SCHEDULE_DIR"
DEFAULT_SCHEDULE_DIR = Path(".hypothesis") / "killpoint"
#: workers the machine may spend on faults; the rest of `max_workers` is left for recovery
FAULTY_WORKERS = 7
SAFETY = {name: check for name, check in CHECKERS.items() if name != "progress"}


@dataclass(frozen=True)
class Failure:
    """A violation the machine found: the schedule that reproduces it, and what it broke."""

    schedule: FaultSchedule
    history: History
    verdicts: list[Verdict]
    path: Path

    @property
    def violated(self) -> list[str]:
        return [v.checker for v in self.verdicts if v.valid is False]

    def faults(self) -> int:
        """How many faults the schedule injects (crashes, rules, jumps, tampers, deploys…)."""
        s = self.schedule
        return (
            len(s.crashes)
            + len(s.network.rules)
            + len(s.clock_jumps)
            + len(s.tamper)
            + len(s.deploys)
            + int(s.redeliver_start)
            + int(s.interleave is not None)
        )


class KillpointMachine(RuleBasedStateMachine):
    """One run of `scenario_name` under `engine`, with faults chosen step by step."""

    scenario_name: ClassVar[str] = "order_saga"
    engine: ClassVar[EngineSpec] = REFERENCE
    failures: ClassVar[list[Failure]] = []

    def __init__(self) -> None:
        super().__init__()
        self.scenario = get(self.scenario_name)
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
        note(f"worker {record.worker}: {record.end} {record.status or ''} {record.reason}")
        return record

    # -- rules ------------------------------------------------------------------------------

    @precondition(lambda self: self._may_run())
    @rule()
    def run_worker(self) -> None:
        """A worker runs to its end: the run's state, or its first death."""
        self._worker()

    @precondition(lambda self: self._may_run())
    @rule(data=st.data())
    def crash_worker(self, data: st.DataObject) -> None:
        """A worker runs and dies at a discovered boundary hit."""
        hits = self.found.first if self.next_worker == 0 else self.found.boundaries
        hit = data.draw(st.sampled_from(hits), label="crash at")
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
    @rule(data=st.data())
    def recover_concurrently(self, data: st.DataObject) -> None:
        """Two workers recover at once, handing over at boundary hits (maybe after a pause
        long enough for the waiting one's lease to lapse)."""
        pair = data.draw(interleavings(self.next_worker - 1), label="interleave")
        self._extend(interleave=pair)
        first = self.next_worker
        self.run.between(first - 1)
        records = run_pair(self.run, first, pair.switch_at, pair.pause_expires_lease)
        for record in sorted(records, key=lambda r: r.worker):
            note(f"worker {record.worker}: {record.end} {record.status or ''} {record.reason}")
        self.next_worker = first + 2
        self.done = any(r.end == "stopped" and _terminal(r.status) for r in records)

    @precondition(lambda self: self._may_run())
    @rule(data=st.data())
    def advance_clock(self, data: st.DataObject) -> None:
        """The clock jumps inside the next worker, past the lease ttl or the approvals' ttl."""
        hit = data.draw(st.sampled_from(self.found.boundaries), label="jump at")
        seconds = data.draw(st.sampled_from(self.found.jump_lengths()), label="seconds")
        at = HitPoint(
            worker=self.next_worker,
            step=hit.step,
            boundary=hit.boundary,
            occurrence=hit.occurrence,
        )
        if any(j.at == at for j in self.schedule.clock_jumps):
            return
        self._extend(clock_jumps=(*self.schedule.clock_jumps, ClockJump(at=at, seconds=seconds)))

    @precondition(lambda self: bool(self.found.targets) and self._may_run())
    @rule(data=st.data())
    def inject_network_fault(self, data: st.DataObject) -> None:
        """One of the next requests of a mutating operation meets a network fault."""
        target: Target = data.draw(st.sampled_from(self.found.targets), label="target")
        mode: FaultMode = data.draw(st.sampled_from(target.modes()), label="mode")
        ahead = data.draw(st.integers(1, 2), label="ahead")
        rule_ = FaultRule(
            service=target.service,
            operation=target.operation,
            occurrence=self.tally.counts[target.key] + ahead,
            mode=mode,
        )
        if any(
            (r.service, r.operation, r.occurrence)
            == (rule_.service, rule_.operation, rule_.occurrence)
            for r in self.schedule.network.rules
        ):
            return
        self._add_rule(rule_)

    @precondition(
        lambda self: self.next_worker > 0 and self._may_run(),
    )
    @rule(data=st.data())
    def deploy(self, data: st.DataObject) -> None:
        """A new version (prompt, model contract, tool schema or plan) is deployed: every worker
        from the next one on runs it."""
        versions: Versions = data.draw(version_changes(self.scenario, self.engine), label="to")
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
    @rule(data=st.data())
    def fail_a_read(self, data: st.DataObject) -> None:
        """One of the next reads of a service (a reconcile lookup, a verification read) times
        out or gets a 5xx."""
        service, operation = data.draw(st.sampled_from(self.found.reads), label="read")
        mode: FaultMode = data.draw(st.sampled_from(READ_MODES), label="mode")
        ahead = data.draw(st.integers(1, 2), label="ahead")
        occurrence = self.tally.counts[(service, operation)] + ahead
        taken = {(r.service, r.operation, r.occurrence) for r in self.schedule.network.rules}
        if (service, operation, occurrence) in taken:
            return
        rule_ = FaultRule(service=service, operation=operation, occurrence=occurrence, mode=mode)
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
        text = schedule.model_dump_json(indent=2)
        digest = hashlib.sha256(text.encode()).hexdigest()[:10]
        folder = Path(os.environ.get(SCHEDULE_DIR_ENV) or DEFAULT_SCHEDULE_DIR)
        path = save_schedule(schedule, folder / f"{schedule.scenario}-{digest}.json")
        failure = Failure(schedule, history, verdicts, path)
        type(self).failures.append(failure)
        broken = [f"{v.checker}: {v.summary}" for v in verdicts if v.valid is False]
        note(f"fault schedule ({schedule.describe()}):\n{text}")
        note(f"replay with:\n    killpoint replay {path}")
        raise AssertionError("oracle violated: " + "; ".join(broken))


_RUNS = itertools.count()
MACHINE_SEED = "stateful"  # the seed of the services' realism draws in every example


def _terminal(status: str | None) -> bool:
    return status is not None and status not in ("running", "waiting_approval")


def machine_for(
    scenario: str, engine: EngineSpec = REFERENCE, name: str | None = None
) -> type[KillpointMachine]:
    """A `KillpointMachine` subclass for one scenario and one engine under test."""
    discover(scenario, engine)  # fail at collection for an unknown scenario, not mid-run
    attrs: dict[str, Any] = {
        "scenario_name": scenario,
        "engine": engine,
        "failures": [],
        "__doc__": f"{scenario} under the {engine.name} engine",
    }
    label = name or "".join(p.title() for p in f"{scenario}_{engine.name}".split("_"))
    return type(f"{label}Machine", (KillpointMachine,), attrs)
