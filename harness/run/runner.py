"""Run one fault schedule against one engine, in process, and return its history.

A worker ends when its run stops, raises an error, or is killed; an engine's exception of no
killpoint type is kept as its failure (`FailureRecord`) for the oracle, and the run goes on.
Between workers the clock moves on and the schedule may tamper or deploy. The harness plays the
human at approval gates, and the operator a case names (`harness.operator`).
"""

from __future__ import annotations

import functools
import threading
import time
import traceback
from collections.abc import Callable

import httpx

from killpoint.contract.errors import KillpointError
from killpoint.contract.records import RunStatus, Versions, is_terminal
from killpoint.harness.history import (
    FailureRecord,
    GrantRecord,
    History,
    HitRecord,
    TamperRecord,
    WorkerRecord,
)
from killpoint.harness.operator import operate
from killpoint.harness.protocol import EngineSpec, EngineUnderTest, WorkerEnv
from killpoint.harness.run.db_loss import await_database, database_fault, reconnecting
from killpoint.harness.run.deploy_routing import notice_for, versions_for
from killpoint.harness.run.interleave import run_pair
from killpoint.harness.run.killswitch import Death, Hit, Killed, KillSwitch
from killpoint.harness.run.neighbours import drive_due, origin_of
from killpoint.harness.run.redelivery import deliver
from killpoint.harness.run.run_history import history_of
from killpoint.harness.run.timeout import Hung, within
from killpoint.harness.run.transport import BoundaryTransport
from killpoint.harness.run.world import World
from killpoint.harness.scenario import GatePolicy, Scenario
from killpoint.harness.schedule import FaultSchedule

MAX_ANSWERS = 3


def workflow_id_for(scenario: Scenario, schedule: FaultSchedule) -> str:
    return f"{scenario.name}:{schedule.run_id}"


class Run:
    """The state of one run while it executes."""

    death: Death = "raise"

    def __init__(
        self, world: World, scenario: Scenario, schedule: FaultSchedule, engine: EngineSpec
    ) -> None:
        self.world = world
        self.scenario = scenario
        self.schedule = schedule
        self.engine = engine
        self.workflow_id = workflow_id_for(scenario, schedule)
        self.input = dict(scenario.make_input(schedule.run_id))
        self.origin = origin_of(world.tenant, self.workflow_id)  # on its requests, journaled
        self.beside: dict[int, Run] = {}  # the neighbours that ran, by their place in the schedule
        self.hits: list[HitRecord] = []
        self.workers: list[WorkerRecord] = []
        self.tampered: list[TamperRecord] = []
        self.grants: list[GrantRecord] = []
        self.failures: list[FailureRecord] = []
        self.started = False
        self.redelivered = False  # the start message came again after the run ended
        self.restart = False
        self.last_status: str | None = None
        self.last_state = ""
        self.last_reason = ""
        self.controls: list[str] = []  # what the case's operator did (`harness.operator`)
        self._lock = threading.Lock()

    # -- building and driving workers -----------------------------------------------------

    def record(self, hit: Hit) -> None:
        journal_seq = self.world.services.journal.last_seq()
        with self._lock:
            self.hits.append(
                HitRecord(
                    worker=hit.worker,
                    step=hit.step,
                    boundary=hit.boundary,
                    occurrence=hit.occurrence,
                    time=hit.time,
                    journal_seq=journal_seq,
                )
            )

    def versions_for(self, worker: int) -> Versions:
        """What worker number `worker` runs (`harness.run.deploy_routing`)."""
        base = self.world.versions.model_copy(update={"plan": self.scenario.workflow.plan_version})
        return versions_for(base, self.schedule, worker)

    def record_grant(self, grant: GrantRecord) -> None:
        self.grants.append(grant)

    def failed(self, where: str, exc: BaseException) -> str:
        """Keep an exception of the engine's own as its failure; what a worker's end says."""
        error = f"{type(exc).__name__}: {exc}"
        return self.keep_failure(where, error, "".join(traceback.format_exception(exc)))

    def keep_failure(self, where: str, error: str, trace: str) -> str:
        with self._lock:
            self.failures.append(FailureRecord(where=where, error=error, traceback=trace))
        return error

    def build(
        self, worker: int, hook_wrap: Callable[[KillSwitch], object] | None = None
    ) -> tuple[EngineUnderTest, httpx.Client, KillSwitch]:
        world, schedule = self.world, self.schedule
        versions = self.versions_for(worker)
        switch = KillSwitch(
            worker,
            schedule,
            world.clock,
            self.record,
            death=self.death,
            advance=world.clock.advance,
        )
        hook = hook_wrap(switch) if hook_wrap else switch
        http = httpx.Client(
            base_url=world.services.base_url,
            # a transport hit is a hit like any other: a pair of workers may switch there too
            transport=BoundaryTransport(
                world.services.transport(), getattr(hook, "transport", switch.transport)
            ).signed(self.origin),
            timeout=5.0,
            headers={"Authorization": f"Bearer {world.canaries.secrets.service_token}"},
        )
        env = WorkerEnv(
            owner=f"worker-{worker}",
            store=world.store,
            http=http,
            hook=hook,  # type: ignore[arg-type]
            clock=world.clock,
            versions=versions,
            lease_ttl=world.lease_ttl,
            deploy=notice_for(schedule, worker),
            secrets=world.canaries.secrets,
            took_start=self.took_start,
        )
        try:
            engine = self.engine.factory(env, self.scenario)
        except BaseException:
            http.close()
            raise
        return engine, http, switch

    def drive(self, engine: EngineUnderTest, worker: int) -> tuple[str, str, str, int | None]:
        """Run one worker to its end; returns (status, state, reason, sequence)."""
        if not self.started or self.schedule.redeliver_start or self.restart:
            engine.start(self.scenario, self.workflow_id, self.input)
            if not getattr(engine, "defers_start", False):
                self.took_start()
        deliver(self, engine, worker)  # start messages that lie, if the schedule has some
        outcome = engine.resume(self.workflow_id)
        for _ in range(MAX_ANSWERS):
            if outcome.status is not RunStatus.WAITING_APPROVAL:
                break
            gate = self._gate(outcome.state)
            policy = self.scenario.gates.get(gate, GatePolicy())
            engine.grant(self.workflow_id, gate, policy.actor, policy.ttl_s)
            now = self.world.clock.now()
            self.record_grant(
                GrantRecord(
                    gate=gate,
                    time=now,
                    expires_at=now + policy.ttl_s,
                    journal_seq=self.world.services.journal.last_seq(),
                    covered=policy.covered(self.input),
                )
            )
            outcome = engine.resume(self.workflow_id)
        if self.schedule.controls:
            outcome = operate(engine, self.schedule, outcome, self.controls)
        return outcome.status.value, outcome.state, outcome.reason, outcome.sequence

    def within_timeout(
        self, engine: EngineUnderTest, worker: int, switch: KillSwitch
    ) -> tuple[str, str, str, int | None]:
        """`drive`, given `world.worker_timeout_s` of wall time (`timeout`)."""

        def last_hit() -> HitRecord | None:
            return next((h for h in reversed(self.hits) if h.worker == worker), None)

        return within(
            functools.partial(self.drive, engine, worker),
            self.world.worker_timeout_s,
            switch,
            worker,
            last_hit,
        )

    def took_start(self) -> None:
        """The start message is durably taken, as a queue's ack says: later workers resume,
        unless the schedule redelivers it. An engine whose `start` returns before the message
        is durable (`defers_start`: a command, which takes it in its own process) says so later,
        through `WorkerEnv.took_start`; until then each worker is handed the message again."""
        self.started, self.restart = True, False
        self.delivered()

    def delivered(self) -> None:
        """The start message was taken (a worker process says so to its parent)."""

    def _gate(self, state: str) -> str:
        transition = self.scenario.workflow.transition_from(state)
        if transition is None or transition.step.gate is None:
            raise KillpointError(f"run waits for approval in state {state!r}, which has no gate")
        return transition.step.gate

    def run_worker(
        self, worker: int, hook_wrap: Callable[[KillSwitch], object] | None = None
    ) -> WorkerRecord:
        clock = self.world.clock
        versions = self.versions_for(worker)
        started_at, wall = clock.now(), time.perf_counter()
        first_hit = len(self.hits)
        status = state = None
        sequence: int | None = None
        reason = ""
        try:
            engine, http, switch = self.build(worker, hook_wrap)
            with http:
                status, state, reason, sequence = self.within_timeout(engine, worker, switch)
            if switch.dead is not None:  # it died on a thread of the engine's own
                raise switch.dead
            end = "stopped"
        except Hung as hung:
            end, reason = "hung", str(hung)
        except Killed as killed:
            end, reason = "killed", f"killed at {killed.point.label()}"
        except KillpointError as exc:
            end, reason = "error", f"{type(exc).__name__}: {exc}"
        except (Exception, SystemExit) as exc:
            fault = database_fault(exc)
            if fault is not None:  # a death, not the engine's failure (`harness.run.db_loss`)
                end, reason = "killed", f"{fault}: {type(exc).__name__}"
                await_database(self.world.store.url)
            else:  # the engine's own failure, for the oracle
                end, reason = "error", self.failed(f"worker {worker}", exc)
        record = WorkerRecord(
            worker=worker,
            owner=f"worker-{worker}",
            plan_version=versions.plan,
            prompt_version=versions.prompt,
            versions=versions,
            end=end,
            status=status,
            state=state,
            sequence=sequence,
            reason=reason,
            hits=sum(1 for h in self.hits[first_hit:] if h.worker == worker),
            started_at=started_at,
            ended_at=clock.now(),
            journal_seq_end=self.world.services.journal.last_seq(),
            wall_s=time.perf_counter() - wall,
        )
        return self.ended(record)

    def ended(self, record: WorkerRecord) -> WorkerRecord:
        """Keep an ended worker's record; one that stopped with a status has the last word."""
        with self._lock:
            self.workers.append(record)
        if record.status is not None:
            self.last_status = record.status
            self.last_state, self.last_reason = record.state or "", record.reason
        return record

    # -- between workers ----------------------------------------------------------------

    def between(self, worker: int) -> None:
        self.world.clock.advance(self.schedule.downtime_s)
        for tamper in self.schedule.tamper:
            if tamper.after_worker != worker:
                continue
            sequence = self.stage(tamper.kind)
            self.tampered.append(
                TamperRecord(
                    after_worker=worker,
                    kind=tamper.kind,
                    sequence=sequence,
                    time=self.world.clock.now(),
                    journal_seq=self.world.services.journal.last_seq(),
                    applied=sequence is not None,
                )
            )

    def stage(self, kind: str) -> int | None:
        """Have the engine's tamper hook stage a tampering; None when it cannot."""
        hook = self.engine.tamper
        try:
            return None if hook is None else hook(self.world.store, self.workflow_id, kind)
        except KillpointError:
            raise
        except Exception as exc:
            self.failed("tamper hook", exc)
            return None

    def more_scheduled(self, worker: int) -> bool:
        s = self.schedule
        return (
            any(t.after_worker >= worker for t in s.tamper)
            or any(d.from_worker > worker for d in s.deploys)
            or any(lie.worker > worker for lie in s.lies)
        )

    def run_pair(self, first: int, switch_at: tuple[int, ...], expire: bool) -> list[WorkerRecord]:
        """Workers `first` and `first + 1` recover at once, taking turns at boundary hits."""
        return run_pair(self, first, switch_at, expire)

    def redeliver_now(self) -> bool:
        """Whether the run, just ended, gets its start message once more (the schedule's
        `redeliver_after_end`): the next worker starts with it, as a queue's late copy would."""
        if not self.schedule.redeliver_after_end or self.redelivered:
            return False
        self.redelivered = self.restart = True
        return True

    # -- the whole run --------------------------------------------------------------------

    def execute(self) -> History:
        worker = 0
        while worker < self.schedule.max_workers:
            self.world.check_store()  # a store file gone is a stop, never a fresh start
            drive_due(
                self, worker
            )  # the neighbours due before this worker (`harness.run.neighbours`)
            pair = self.schedule.interleave
            if (
                pair is not None
                and pair.after_worker == worker - 1
                and worker + 1 < (self.schedule.max_workers)
            ):
                records = self.run_pair(worker, pair.switch_at, pair.pause_expires_lease)
                worker += 2
                done = any(r.end == "stopped" and is_terminal(r.status) for r in records)
            else:
                record = self.run_worker(worker)
                done = record.end == "stopped" and is_terminal(record.status)
                worker += 1
            if done and not self.more_scheduled(worker - 1) and not self.redeliver_now():
                break
            self.between(worker - 1)
        return self.history()

    def history(self) -> History:
        return history_of(self)


def run_schedule(
    world: World, scenario: Scenario, schedule: FaultSchedule, engine: EngineSpec
) -> History:
    reconnecting(world.store.url, lambda: world.begin_run(engine))
    world.services.set_plan(schedule.network.seeded(schedule.run_id))
    return Run(world, scenario, schedule, engine).execute()
