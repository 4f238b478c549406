"""Temporal as an engine under test: any catalogue scenario as one generic workflow of activities.

One workflow type (`UnitsWorkflow`) runs every scenario: it loops `units.next_unit` over the
units' JSON state and runs one activity per workflow step — a dynamic activity named after the
step, whose body is `units.Units.run` (the state in, the next state out). Temporal's event
history is the checkpoint: the start event holds the initial state, each ActivityTaskCompleted
event the state after that step, and a worker that resumes replays the history (no workflow
cache, `max_cached_workflows=0`) and re-runs only the activity whose completion is not in it.
Activities keep Temporal's default retry policy (retries re-run the activity), with a short
start-to-close timeout so a dead worker's attempt is retried soon. A gate is a wait for the
`reopen` signal, which `grant` sends once the grant is written.

Durable writes are observed from outside the units: `checkpoint.built` when an activity's
result is ready to be reported (in the activity, after the body), `checkpoint.committed` when
the next workflow task brings the ActivityTaskCompleted event back (in the workflow, on a live
— not replayed — event), so the crash between them is the one where the effect happened and
history does not know. Start: around `start_workflow` (the WorkflowExecutionStarted event).

A death in process: `Killed` in an activity completes it asynchronously (Temporal is told
nothing, as after a SIGKILL, and times the attempt out), and the Worker is shut down at once;
in a workflow task it fails the task (Temporal retries it at once). The next worker is a new
Worker on the same task queue, continuing the same workflow. In the real tier the forked
child runs the Worker and is SIGKILLed. See temporal_server.py for the dev server.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from datetime import timedelta
from typing import Any

from pydantic import JsonValue
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import RawValue, WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from killpoint.contract import boundaries as b
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import Outcome, RunStatus
from killpoint.contract.workflow import Workflow
from killpoint.harness.catalogue import installed
from killpoint.harness.engines import units
from killpoint.harness.engines.spec import framework_spec
from killpoint.harness.engines.temporal_server import (
    DevServer,
    Read,
    call,
    quiet_sdk_logs,
    read,
    release_runtime,
    server,
)
from killpoint.harness.engines.units_reader import UnitsReader
from killpoint.harness.protocol import (
    ANY_WORKFLOW,
    FORKED,
    CheckpointRecord,
    EngineSpec,
    StoreHandle,
    WorkerEnv,
)
from killpoint.harness.run.killswitch import Killed
from killpoint.harness.scenario import Scenario

DEFAULT_VARIANT = "keyed"
VARIANTS = units.VARIANTS
LACKS = units.LACKS  # no budget, fencing, lease, ledger, queue, tenant or versions of its own
START_TO_CLOSE = timedelta(seconds=1)  # an attempt of a dead worker is retried after this
TASK_TIMEOUT = timedelta(seconds=2)  # a workflow task of a dead worker likewise (default 10 s)
POLL_S = 0.05
RESUME_TIMEOUT_S = 75.0  # below the call's own limit: a stuck workflow is an error with a reason
WAITING = RunStatus.WAITING_APPROVAL.value
_WORKFLOWS: dict[str, Workflow] = {}  # the definitions this process's engines run, by name
_local = threading.local()  # on a worker's workflow-task thread: the engine it belongs to


def definition(name: str) -> Workflow:
    if name not in _WORKFLOWS:
        for scenario in installed().scenarios.values():
            _WORKFLOWS.setdefault(scenario.workflow.name, scenario.workflow)
    return _WORKFLOWS[name]


@workflow.defn(name="killpoint-units")
class UnitsWorkflow:
    """Any scenario: an activity per step, routed by the units, waiting at a gate for `reopen`."""

    def __init__(self) -> None:
        self.reopened = 0

    @workflow.signal
    def reopen(self) -> None:
        self.reopened += 1

    @workflow.run
    async def run(self, start: dict[str, Any]) -> dict[str, Any]:
        steps = definition(start["workflow"])
        state: dict[str, Any] = start["state"]
        seen = 0  # reopen signals taken so far
        while True:
            unit = units.next_unit(steps, state)
            if unit is None:
                if state["status"] != WAITING:
                    return state
                await self._reopened_after(seen)
                seen = self.reopened
                state = units.reopen(state)
                continue
            state = await workflow.execute_activity(
                unit,
                args=[start["workflow_id"], state],
                start_to_close_timeout=START_TO_CLOSE,
                result_type=dict,
            )
            if not workflow.unsafe.is_replaying():
                _committed(unit)

    async def _reopened_after(self, seen: int) -> None:
        def reopened() -> bool:
            return self.reopened > seen

        await workflow.wait_condition(reopened)


def _committed(step: str) -> None:
    """The workflow task that brought a step's ActivityTaskCompleted event: it is in history."""
    engine: TemporalEngine | None = getattr(_local, "engine", None)
    if engine is not None:
        engine.observe(b.CHECKPOINT_COMMITTED, step)


class TemporalEngine:
    """One worker: a Temporal Worker on the run's task queue for each `resume`."""

    def __init__(self, env: WorkerEnv, scenario: Scenario, keying: units.Keying) -> None:
        self.env = env
        self.workflow = scenario.workflow
        _WORKFLOWS[self.workflow.name] = self.workflow
        self.units = units.Units(env, scenario, keying)
        self.server: DevServer = server(env.store)
        quiet_sdk_logs()
        self.dead: Killed | None = None
        self._wake: Callable[[], None] = _nothing

    # -- deaths ----------------------------------------------------------------------------

    def _die(self, death: Killed) -> None:
        if self.dead is None:
            self.dead = death
        self._wake()

    def observe(self, boundary: str, step: str | None) -> None:
        """A boundary on the workflow-task thread: a death there fails the task."""
        try:
            if self.dead is not None:
                raise self.dead
            self.env.hook(boundary, step)
        except Killed as death:
            self._die(death)
            raise RuntimeError(f"the worker died: {death}") from None

    @activity.defn(dynamic=True)
    def unit(self, args: Sequence[RawValue]) -> dict[str, Any]:
        """The activity of every step (its type is the step's name): `Units.run`."""
        convert = activity.payload_converter()
        workflow_id = convert.from_payload(args[0].payload, str)
        state = convert.from_payload(args[1].payload, dict)
        step = activity.info().activity_type
        try:
            if self.dead is not None:
                raise self.dead
            new = self.units.run(workflow_id, step, state)
            self.env.hook(b.CHECKPOINT_BUILT, step)
        except Killed as death:
            self._die(death)
            activity.raise_complete_async()  # Temporal hears nothing, as after a SIGKILL
        return new

    # -- the protocol ------------------------------------------------------------------------

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        return call(lambda: self._start(workflow_id, input))

    async def _start(self, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        client = await self.server.client()
        target = self.server.workflow_id(workflow_id)
        if (await read(client, target)).status is not None:
            return False
        state = units.initial_state(self.workflow, input, self.env.clock.now())
        start = {"workflow": self.workflow.name, "workflow_id": workflow_id, "state": state}
        self.env.hook(b.CHECKPOINT_BUILT, None)
        try:
            await client.start_workflow(
                UnitsWorkflow.run,
                start,
                id=target,
                task_queue=self.server.task_queue,
                task_timeout=TASK_TIMEOUT,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            )
        except WorkflowAlreadyStartedError:
            return False
        self.env.hook(b.CHECKPOINT_COMMITTED, None)
        return True

    def resume(self, workflow_id: str) -> Outcome:
        return call(lambda: self._resume(workflow_id))

    async def _resume(self, workflow_id: str) -> Outcome:
        client = await self.server.client()
        target = self.server.workflow_id(workflow_id)
        found = await read(client, target)
        if found.status is None:
            raise KillpointError(f"Temporal has no workflow {workflow_id!r}")
        if self.dead is not None:
            raise self.dead
        loop, woke = asyncio.get_running_loop(), asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(woke.set)

        self._wake = wake
        with (
            ThreadPoolExecutor(1, "kp-activity") as activities,
            ThreadPoolExecutor(1, "kp-workflow", initializer=self._own_thread) as tasks,
        ):
            async with self._worker(client, activities, tasks):
                found = await self._until_settled(client, target, woke)
        self._wake = _nothing
        if self.dead is not None:
            raise self.dead
        return self._outcome(workflow_id, found)

    def _own_thread(self) -> None:
        _local.engine = self

    def _worker(
        self, client: Client, activities: ThreadPoolExecutor, tasks: ThreadPoolExecutor
    ) -> Worker:
        return Worker(
            client,
            task_queue=self.server.task_queue,
            workflows=[UnitsWorkflow],
            activities=[self.unit],
            activity_executor=activities,
            workflow_task_executor=tasks,
            workflow_runner=UnsandboxedWorkflowRunner(),
            max_cached_workflows=0,  # every workflow task replays the history: it is the state
            max_concurrent_activities=1,
            graceful_shutdown_timeout=timedelta(0),
        )

    async def _until_settled(self, client: Client, target: str, woke: asyncio.Event) -> Read:
        """Watch the history until the workflow is closed or waits at a gate (or this worker
        died); a workflow that gets nowhere is an error after RESUME_TIMEOUT_S."""
        deadline = time.monotonic() + RESUME_TIMEOUT_S
        while True:
            found = await read(client, target)
            if self.dead is not None or settled(found):
                return found
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"Temporal workflow {target} made no end in {RESUME_TIMEOUT_S} s"
                )
            with suppress(TimeoutError):
                await asyncio.wait_for(woke.wait(), POLL_S)

    def _outcome(self, workflow_id: str, found: Read) -> Outcome:
        if not found.saved:
            raise KillpointError(f"Temporal holds no state of {workflow_id!r}")
        state = found.saved[-1].state
        if found.status not in (WorkflowExecutionStatus.COMPLETED, WorkflowExecutionStatus.RUNNING):
            name = found.status.name if found.status else "absent"
            raise RuntimeError(f"Temporal workflow {workflow_id} ended {name}")
        return units.outcome_of(self.workflow, workflow_id, state, len(found.saved))

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        self.units.grants.grant(workflow_id, gate, actor, self.env.clock.now(), ttl_s)
        call(lambda: self._reopen(workflow_id))

    async def _reopen(self, workflow_id: str) -> None:
        client = await self.server.client()
        await client.get_workflow_handle(self.server.workflow_id(workflow_id)).signal(
            UnitsWorkflow.reopen
        )


def _nothing() -> None:
    pass


def settled(found: Read) -> bool:
    if found.status is not WorkflowExecutionStatus.RUNNING:
        return True
    last = found.saved[-1] if found.saved else None
    return last is not None and last.state["status"] == WAITING and not last.signalled


# -- the history reader ----------------------------------------------------------------------


class TemporalReader(UnitsReader):
    """The workflow's event history as checkpoints: the start event's state as 1, then each
    ActivityTaskCompleted event's state, numbered in history order."""

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]:
        dev = server(self.handle)

        async def fetch() -> Read:
            return await read(await dev.client(), dev.workflow_id(workflow_id))

        found = call(fetch)
        return [
            units.checkpoint_record(self.workflow, n, s.state, s.size)
            for n, s in enumerate(found.saved, 1)
        ]


# -- the spec -------------------------------------------------------------------------------


def prepare(handle: StoreHandle) -> None:
    """Before workers are forked: the world's dev server, running, and no runtime alive."""
    server(handle)
    release_runtime()


def reset(handle: StoreHandle) -> None:
    """Before each run: a new task queue and id prefix (the last run's workflows terminated),
    and the units' files gone."""
    server(handle).new_epoch()
    units.reset_folder(handle)


def read_history(handle: StoreHandle, scenario: Scenario) -> TemporalReader:
    return TemporalReader(handle, scenario)


def spec(variant: str = DEFAULT_VARIANT) -> EngineSpec:
    """`--engine temporal[:VARIANT]` (the `killpoint.engines` entry point)."""
    return framework_spec(
        "temporal",
        lambda env, scenario: TemporalEngine(env, scenario, units.Keying(variant)),
        variant,
        variants=VARIANTS,
        reader=read_history,
        prepare=prepare,
        reset=reset,
        description=f"Temporal {variant}: an activity per step, the event history as checkpoint",
        # a worker takes any task of the run's queue; its Rust core does not survive a fork
        lacks=LACKS | {ANY_WORKFLOW, FORKED},
    )
