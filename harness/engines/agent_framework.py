"""Microsoft Agent Framework (`agent-framework-core`) as an engine under test.

Any catalogue scenario runs as an Agent Framework workflow built with its `WorkflowBuilder`: one
`Executor` per workflow step (its id is the step's name, its body `units.Units.run`), plus one
entry executor, `ROUTER`, that only dispatches the state it is handed to the step
`units.next_unit` names. Each step executor sends the state it made straight on to the next
step through conditional edges (`next_unit(state) == target`), so a run is one superstep per
step; the router runs only when a run (re)enters with a fresh message — the start, or a run
waiting for approval that a grant lets go on — because a workflow has one start executor and
re-entry must reach any step. The units' JSON state is the workflow's shared state
(`ctx.set_state(STATE_KEY, …)`), and the framework's own superstep checkpoints, in its
`FileCheckpointStorage` under the store's work folder, are what make progress durable: the
storage's `save` is wrapped to call the `checkpoint.built` / `checkpoint.committed` hooks.

`start` writes the framework's entry checkpoint only (the start message, before any executor
runs); `resume` restores the latest checkpoint of the workflow (the workflow's name is its id)
and runs until `next_unit` is None. The framework is async: each call runs it under
`asyncio.run`, so a death raised from a hook (a `BaseException`) ends that event loop, which
cancels every task it left and joins its executor threads before the worker is gone.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_framework import (
    Executor,
    FileCheckpointStorage,
    WorkflowBuilder,
    WorkflowCheckpoint,
    WorkflowContext,
    handler,
)
from agent_framework import Workflow as AfWorkflow
from pydantic import JsonValue

from killpoint.contract import boundaries as b
from killpoint.contract.boundaries import BoundaryHook
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import (
    Outcome,
)
from killpoint.contract.workflow import StepKind, Workflow
from killpoint.harness.engines import units
from killpoint.harness.engines.agent_framework_history import (
    CONTINUES,
    FOLDER,
    STATE_KEY,
    CheckpointReader,
    checkpoint_folder,
    checkpoints_of,
    in_new_loop,
    records_of,
)
from killpoint.harness.engines.spec import framework_spec
from killpoint.harness.engines.units import Grants, Keying, State, Units
from killpoint.harness.protocol import (
    EngineSpec,
    StoreHandle,
    WorkerEnv,
)
from killpoint.harness.scenario import Scenario

DEFAULT_VARIANT = "keyed"
VARIANTS = units.VARIANTS
FRAMEWORK = "agent-framework"
ROUTER = "killpoint.router"
ROUNDS = 8  # runs of the framework per resume: a restore, then at most a few re-entries


class HookedStorage(FileCheckpointStorage):
    """The framework's file storage, as a user would configure it, with each save reported:
    `checkpoint.built` before the file is written, `checkpoint.committed` once it is in place.
    `continues` marks the first checkpoint of a re-entered run with the one it goes on from
    (the framework starts a fresh message's run without a parent)."""

    def __init__(self, path: Path, hook: BoundaryHook, step: Callable[[], str | None]) -> None:
        super().__init__(path)
        self.hook = hook
        self.step = step
        self.continues: str | None = None

    async def save(self, checkpoint: WorkflowCheckpoint) -> str:
        if self.continues is not None and checkpoint.previous_checkpoint_id is None:
            checkpoint.metadata = {**checkpoint.metadata, CONTINUES: self.continues}
        self.continues = None
        step = self.step()
        self.hook(b.CHECKPOINT_BUILT, step)
        saved = await super().save(checkpoint)
        self.hook(b.CHECKPOINT_COMMITTED, step)
        return saved


class StepExecutor(Executor):
    """One workflow step: runs its unit and sends the new state on (or yields it at the end)."""

    def __init__(self, engine: AgentFrameworkEngine, step: str) -> None:
        super().__init__(id=step)
        self.engine = engine

    @handler
    async def run(self, state: dict[str, Any], ctx: WorkflowContext[dict[str, Any]]) -> None:
        self.engine.current = self.id
        # on a thread: the unit's calls are synchronous (and the in-process services' transport
        # runs a loop of its own, which cannot start on a thread whose loop is running)
        new = await asyncio.to_thread(
            self.engine.units.run, self.engine.workflow_id, self.id, state
        )
        ctx.set_state(STATE_KEY, new)
        if units.next_unit(self.engine.workflow, new) is not None:
            await ctx.send_message(new)


class Router(Executor):
    """The start executor: keeps the state it is handed and sends it to the step it names."""

    def __init__(self) -> None:
        super().__init__(id=ROUTER)

    @handler
    async def route(self, state: dict[str, Any], ctx: WorkflowContext[dict[str, Any]]) -> None:
        ctx.set_state(STATE_KEY, state)
        await ctx.send_message(state)


def successors(workflow: Workflow, step: str) -> list[str]:
    """The steps that may run right after `step`: where its transitions lead on success or
    rejection, and the gate a protected step falls back to."""
    targets: set[str] = set()
    for transition in workflow.transitions:
        if transition.step.name != step:
            continue
        targets.update(t for t in (transition.target, transition.on_failure) if t is not None)
        if transition.step.gate is not None and transition.step.kind is not StepKind.APPROVAL:
            targets.add(workflow.gate_state(transition.step.gate))  # `Units._guard` goes back
    steps = [workflow.transition_from(t) for t in sorted(targets)]
    return sorted({t.step.name for t in steps if t is not None})


def _routes_to(workflow: Workflow, target: str) -> Callable[[Any], bool]:
    def routes_to(state: Any) -> bool:
        return units.next_unit(workflow, state) == target

    return routes_to


class AgentFrameworkEngine:
    """One worker: a workflow per call, on the store's checkpoint folder."""

    def __init__(self, env: WorkerEnv, scenario: Scenario, keying: Keying) -> None:
        self.env = env
        self.workflow = scenario.workflow
        self.units = Units(env, scenario, keying)
        self.grants = Grants(units.folder_of(env.store))
        self.workflow_id = ""
        self.current: str | None = None  # the step whose superstep a checkpoint ends

    def build(self, workflow_id: str) -> tuple[AfWorkflow, HookedStorage]:
        self.workflow_id, self.current = workflow_id, None
        storage = HookedStorage(checkpoint_folder(self.env.store), self.env.hook, self._step)
        router = Router()
        steps = {t.step.name: StepExecutor(self, t.step.name) for t in self.workflow.transitions}
        builder = WorkflowBuilder(
            name=workflow_id, start_executor=router, checkpoint_storage=storage
        )
        for name, executor in steps.items():
            builder.add_edge(router, executor, condition=_routes_to(self.workflow, name))
            for after in successors(self.workflow, name):
                builder.add_edge(executor, steps[after], condition=_routes_to(self.workflow, after))
        return builder.build(), storage

    def _step(self) -> str | None:
        return self.current

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        state = units.initial_state(self.workflow, input, self.env.clock.now())
        return in_new_loop(lambda: self._start(workflow_id, state))

    async def _start(self, workflow_id: str, state: State) -> bool:
        """Accept the start message: the framework's entry checkpoint holds it, and no
        executor runs until `resume` restores that checkpoint."""
        workflow, storage = self.build(workflow_id)
        if await storage.get_latest(workflow_name=workflow_id) is not None:
            return False
        stream = workflow.run(state, stream=True)
        async for event in stream:
            if event.type == "superstep_started":  # the entry checkpoint is saved by now
                break
        return True

    def resume(self, workflow_id: str) -> Outcome:
        return in_new_loop(lambda: self._resume(workflow_id))

    async def _resume(self, workflow_id: str) -> Outcome:
        ran = False  # a state this call left is its answer: only an earlier one is reopened
        for _ in range(ROUNDS):
            workflow, storage = self.build(workflow_id)
            latest = await storage.get_latest(workflow_name=workflow_id)
            if latest is None:
                raise KillpointError(f"{FRAMEWORK}: no checkpoint of {workflow_id!r}")
            if latest.messages:  # work in flight: the framework's own restore runs it
                await workflow.run(checkpoint_id=latest.checkpoint_id)
                ran = True
                continue
            state = None if ran else self.reentry(latest.state[STATE_KEY])
            if state is None:
                lineage = records_of(self.workflow, await checkpoints_of(storage, workflow_id))
                sequence = lineage[-1].sequence if lineage else 0
                return units.outcome_of(
                    self.workflow, workflow_id, latest.state[STATE_KEY], sequence
                )
            storage.continues, ran = latest.checkpoint_id, True
            await workflow.run(state)
        raise KillpointError(f"{FRAMEWORK}: {workflow_id!r} did not settle in {ROUNDS} runs")

    def reentry(self, state: State) -> State | None:
        """The state a new run starts from (`units.reopen`: a run that waited for a human
        checks its gate anew), or None when the run is over: terminal or stopped for review."""
        state = units.reopen(state)
        return state if units.next_unit(self.workflow, state) is not None else None

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        self.grants.grant(workflow_id, gate, actor, self.env.clock.now(), ttl_s)


def reader(handle: StoreHandle, scenario: Scenario) -> CheckpointReader:
    return CheckpointReader(handle, scenario)


def reset(handle: StoreHandle) -> None:
    shutil.rmtree(handle.workdir / FOLDER, ignore_errors=True)
    units.reset_folder(handle)


def spec(variant: str = DEFAULT_VARIANT) -> EngineSpec:
    """`--engine agent-framework[:VARIANT]` (the `killpoint.engines` entry point)."""
    return framework_spec(
        FRAMEWORK,
        lambda env, scenario: AgentFrameworkEngine(env, scenario, units.Keying(variant)),
        variant,
        variants=VARIANTS,
        reader=reader,
        reset=reset,
        description=f"Microsoft Agent Framework workflow, file checkpoints, {variant} units",
        lacks=units.LACKS,  # with lease and versions: any process may restore and run it
    )
