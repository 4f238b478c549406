"""DBOS as an engine under test: any catalogue scenario as one DBOS workflow of steps.

The mapping (`killpoint run --engine dbos:naive|keyed`): ONE workflow function,
`killpoint_units`, loops `units.next_unit` and calls one `@DBOS.step` per workflow step, named
after it, whose body is `Units.run`; the state DBOS carries between steps is the units' JSON
document, and each step's return value is what DBOS records in its system database
(`operation_outputs`) — the checkpoint (see `dbos_store`). `start` is `DBOS.start_workflow`
under the run's workflow id (so a redelivered start finds the workflow and returns False);
`resume` waits, never without a deadline, for the workflow to finish. A workflow that ends
waiting for a human is complete in DBOS's eyes; after the grant, `resume` continues it as a
new workflow `<id>@2` from the last state.

DBOS is a process-wide singleton that runs workflows on threads of its own. So each worker
launches a fresh instance (`DBOS.launch()` recovers the PENDING workflows a dead predecessor
left, by DBOS's own startup recovery) and destroys it before `resume` returns, dies or fails:
nothing of a worker outlives it. A death raised on DBOS's thread (a hook, or the HTTP
transport) is caught by the workflow function, kept, and raised again by `resume` on the
worker's own thread; every later hook of that worker raises it again (a latch), so the dead
worker's thread cannot write on.

Boundaries: DBOS's recording of a step's output (`SystemDatabase.record_operation_result`, one
transaction) is wrapped: `checkpoint.built` before it (the step returned, its output is
serialised, nothing is written) and `checkpoint.committed` after its commit. The workflow's
final status write is wrapped the same way, with no step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from dbos import DBOS, DBOSConfig, SetWorkflowID, WorkflowStatusString
from pydantic import JsonValue

from killpoint.contract import boundaries as b
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import Outcome, RunStatus
from killpoint.harness.engines import units
from killpoint.harness.engines.dbos_store import (
    SystemDatabase,
    read_history,
    segment_id,
    system_database,
)
from killpoint.harness.engines.dbos_store import reset as reset_store
from killpoint.harness.engines.spec import framework_spec
from killpoint.harness.protocol import (
    ANY_WORKFLOW,
    SHARED_PROCESS,
    EngineSpec,
    StoreHandle,
    WorkerEnv,
)
from killpoint.harness.scenario import Scenario

DEFAULT_VARIANT = "keyed"
VARIANTS = units.VARIANTS
APP = "killpoint"
WORKFLOW = "killpoint_units"
VERSION = "killpoint-units-1"
WAIT_S = 30.0  # the longest a worker waits for its workflow: a hang becomes a failure
POLL_S = 0.02
QUEUE_POLL_S = 0.05
POOL = 4  # system database connections per worker (DBOS's default is 20; five share a server)
FAILED = (
    WorkflowStatusString.ERROR.value,
    WorkflowStatusString.CANCELLED.value,
    WorkflowStatusString.MAX_RECOVERY_ATTEMPTS_EXCEEDED.value,
)

_active: DbosEngine | None = None  # the worker whose DBOS instance is launched (one a process)
_steps: dict[str, Callable[[str, str, units.State], units.State]] = {}


def _engine() -> DbosEngine:
    if _active is None:
        raise KillpointError("a DBOS workflow ran with no killpoint worker launched")
    return _active


def _run_unit(workflow_id: str, step_name: str, state: units.State) -> units.State:
    return _engine().units.run(workflow_id, step_name, state)


def _step(name: str) -> Callable[[str, str, units.State], units.State]:
    """The DBOS step of one workflow step, named after it (so DBOS's records say which)."""
    if name not in _steps:
        _steps[name] = DBOS.step(name=name)(_run_unit)
    return _steps[name]


@DBOS.workflow(name=WORKFLOW)
def killpoint_units(workflow_id: str, state: units.State) -> units.State:
    engine = _engine()
    engine.running.add(DBOS.workflow_id or "")
    try:
        step = units.next_unit(engine.workflow, state)
        while step is not None:
            state = _step(step)(workflow_id, step, state)
            step = units.next_unit(engine.workflow, state)
        return state
    except BaseException as exc:
        engine.ended(exc)
        raise


def shutdown() -> None:
    """Destroy this process's DBOS instance, if any: its threads stop, its connections close."""
    global _active
    _active = None
    DBOS.destroy(workflow_completion_timeout_sec=0)


class DbosEngine:
    """One worker: a DBOS instance of its own for as long as it runs."""

    def __init__(self, env: WorkerEnv, scenario: Scenario, keying: units.Keying) -> None:
        self.outer = env
        self.env = replace(env, hook=self.hook)
        self.workflow = scenario.workflow
        self.units = units.Units(self.env, scenario, keying)
        self.database: SystemDatabase = system_database(env.store)
        self.death: BaseException | None = None
        self.failure: BaseException | None = None
        self.running: set[str] = set()  # DBOS workflows whose body ran in this worker
        self.done: set[str] = set()  # … and whose final status this worker wrote
        self.wake = threading.Event()
        self.busy = False  # between its launch and its close: its instance is DBOS's

    # -- the latch -------------------------------------------------------------------------

    def hook(self, boundary: str, step: str | None = None) -> None:
        if self.death is not None:
            raise self.death
        try:
            self.outer.hook(boundary, step)
        except Exception:
            raise
        except BaseException as exc:
            self.death = exc
            self.wake.set()
            raise

    def ended(self, exc: BaseException) -> None:
        """The workflow body ended in an exception on DBOS's thread: a death or a failure."""
        if isinstance(exc, Exception):
            self.failure = exc
        elif self.death is None:
            self.death = exc
        self.wake.set()

    # -- DBOS's lifetime -------------------------------------------------------------------

    def launch(self) -> None:
        global _active
        if _active is self:
            return
        if _active is not None and _active.busy:
            raise KillpointError(
                f"DBOS runs one instance per process, and {_active.outer.owner} is running it: "
                f"{self.outer.owner} cannot run beside it in this process (two workers at once "
                "need two processes: --tier real)"
            )
        shutdown()  # whatever a worker before this one left
        self.busy = True
        location = self.database.location
        config: DBOSConfig = {
            "name": APP,
            "system_database_url": location.for_dbos(),
            "dbos_system_schema": location.schema,
            "sys_db_pool_size": POOL,
            # DBOS recovers only workflows of its own application version, by default a hash
            # of the registered functions: the steps registered as they first run would make
            # every worker a new version that recovers nothing (see the findings). Pinned, as
            # a deployment pins it.
            "application_version": VERSION,
            "log_level": "WARNING",
        }
        instance = DBOS(config=config)
        # Recovery re-enqueues a dead worker's workflow on DBOS's in-memory internal queue,
        # polled once a second: a second of every recovery, spent waiting (not a semantic).
        instance._registry.get_internal_queue()._polling_interval_sec = QUEUE_POLL_S
        _active = self
        DBOS.launch()
        self._observe(instance._sys_db)

    def _observe(self, sys_db: Any) -> None:
        """Hooks around DBOS's two durable writes of a run's progress."""
        record, finish = sys_db.record_operation_result, sys_db.update_workflow_outcome

        def record_operation_result(result: Any, *args: Any, **kwargs: Any) -> Any:
            step = result.get("function_name")
            self.hook(b.CHECKPOINT_BUILT, step)
            written = record(result, *args, **kwargs)
            self.hook(b.CHECKPOINT_COMMITTED, step)
            return written

        def update_workflow_outcome(workflow_uuid: str, *args: Any, **kwargs: Any) -> Any:
            self.hook(b.CHECKPOINT_BUILT, None)
            written = finish(workflow_uuid, *args, **kwargs)
            self.hook(b.CHECKPOINT_COMMITTED, None)
            self.done.add(workflow_uuid)
            self.wake.set()
            return written

        sys_db.record_operation_result = record_operation_result
        sys_db.update_workflow_outcome = update_workflow_outcome

    # -- the protocol ----------------------------------------------------------------------

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        self.launch()
        if DBOS.get_workflow_status(workflow_id) is not None:
            return False
        state = units.initial_state(self.workflow, input, self.env.clock.now())
        self._begin(workflow_id, 1, state)
        return True

    def _begin(self, workflow_id: str, index: int, state: units.State) -> None:
        with SetWorkflowID(segment_id(workflow_id, index)):
            DBOS.start_workflow(killpoint_units, workflow_id, state)

    def resume(self, workflow_id: str) -> Outcome:
        try:
            self.launch()
            segments = self.database.segments(workflow_id)
            if not segments:
                raise KillpointError(f"DBOS has no workflow {workflow_id!r}")
            state = self._wait(segments[-1])
            if self._granted(workflow_id, state):
                self._begin(workflow_id, len(segments) + 1, units.reopen(state))
                state = self._wait(segment_id(workflow_id, len(segments) + 1))
            sequence = len(self.database.step_outputs(workflow_id))
            return units.outcome_of(self.workflow, workflow_id, state, sequence)
        finally:
            self.close()

    def close(self) -> None:
        """Destroy this worker's DBOS instance (never another worker's)."""
        if _active is self:
            shutdown()
        self.busy = False

    def _wait(self, dbos_id: str) -> units.State:
        """The workflow's final state, once DBOS has it; never waits past `WAIT_S`."""
        deadline = time.monotonic() + WAIT_S
        while True:
            if self.death is not None:
                raise self.death
            if self.failure is not None:
                raise self.failure
            status = DBOS.get_workflow_status(dbos_id)
            ours = dbos_id in self.running and dbos_id not in self.done
            if status is not None and not ours:
                if status.status == WorkflowStatusString.SUCCESS.value:
                    return cast(units.State, status.output)
                if status.status in FAILED:
                    raise RuntimeError(f"DBOS workflow {dbos_id} ended {status.status}")
            if time.monotonic() > deadline:
                seen = "absent" if status is None else status.status
                raise TimeoutError(f"DBOS workflow {dbos_id} still {seen} after {WAIT_S:.0f} s")
            self.wake.wait(POLL_S)
            self.wake.clear()

    def _granted(self, workflow_id: str, state: units.State) -> bool:
        """A run that stopped at a gate continues once its grant is valid."""
        if state["status"] != RunStatus.WAITING_APPROVAL.value:
            return False
        transition = self.workflow.transition_from(state["state"])
        gate = None if transition is None else transition.step.gate
        return gate is not None and self.units.grants.valid(workflow_id, gate, self.env.clock.now())

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        self.units.grants.grant(workflow_id, gate, actor, self.env.clock.now(), ttl_s)


def reset(handle: StoreHandle) -> None:
    shutdown()  # an instance left launched would hold the tables the reset empties
    reset_store(handle)


def spec(variant: str = DEFAULT_VARIANT) -> EngineSpec:
    """`--engine dbos[:VARIANT]` (the `killpoint.engines` entry point)."""
    return framework_spec(
        "dbos",
        lambda env, scenario: DbosEngine(env, scenario, units.Keying(variant)),
        variant,
        variants=VARIANTS,
        reader=read_history,
        reset=reset,
        # one DBOS instance per process, which recovers every pending workflow as it launches
        lacks=units.LACKS | {SHARED_PROCESS, ANY_WORKFLOW},
        description=f"DBOS {variant}: one workflow, a step per workflow step",
    )
