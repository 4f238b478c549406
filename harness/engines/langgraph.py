"""LangGraph as an engine under test: any catalogue scenario as a graph, on LangGraph's own saver.

Each workflow step is a graph node named after it, whose body is the units' (`units.Units.run`);
a conditional edge after every node (and after START) routes by `units.next_unit`, to END once
the run is terminal or waits for a human. The graph's one channel, `doc`, holds the units' JSON
state. Progress is made durable by LangGraph's own checkpointer, as a user wires it: a
`SqliteSaver` on a file in the world's work folder when the store URL is SQLite, a
`PostgresSaver` in the URL's schema when it is PostgreSQL. The thread id is the workflow id.

`start` writes the initial state as LangGraph's own first checkpoints, by invoking the graph
with it and interrupting before any node runs (`interrupt_before="*"`): the input checkpoint
(step -1), its pending writes and the checkpoint after START (step 0). `resume` continues the
thread from its last checkpoint (`invoke(None, …)`), where LangGraph re-runs the node whose
writes it did not save and reuses the writes it did (its pending writes).

The saver is wrapped so each durable write (`put`, `put_writes`) reports `checkpoint.built`
before and `checkpoint.committed` after. LangGraph calls its saver on a background thread; the
graph runs with `durability="sync"` (each step's checkpoint saved before the next step starts)
and `max_concurrency=1` (one background thread), so the hooks come in one order on every run
and a schedule replays. A death raised on that thread reaches the worker's thread through the
future LangGraph waits on, and the kill-switch's latch kills every later hook.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import JsonValue
from sqlalchemy import make_url

from killpoint.contract import boundaries as b
from killpoint.contract.boundaries import BoundaryHook, no_hook
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import (
    Outcome,
    RunStatus,
)
from killpoint.contract.workflow import Workflow
from killpoint.harness.engines import units
from killpoint.harness.engines.spec import framework_spec
from killpoint.harness.protocol import (
    EngineSpec,
    HistoryReader,
    StoreHandle,
    WorkerEnv,
)
from killpoint.harness.scenario import Scenario

DEFAULT_VARIANT = "keyed"
VARIANTS = units.VARIANTS
FILE = "langgraph.sqlite"  # the SqliteSaver's database, in the world's work folder
CHANNEL = "doc"
# a workflow's steps are supersteps: more than LangGraph's default limit of 25 for a long one
RECURSION_LIMIT = 10_000
# what this adapter keeps no record of: budget, fencing, lease, ledger, tenant, versions
LACKS = units.LACKS
T = TypeVar("T")

if TYPE_CHECKING:
    from killpoint.harness.engines.langgraph_postgres import HookedPostgresSaver


class Doc(TypedDict):
    doc: units.State


# -- the saver, wrapped --------------------------------------------------------------------


class Hooks:
    """Reports each durable write of the saver as the boundaries around it."""

    def __init__(
        self, hook: BoundaryHook = no_hook, step: Callable[[], str | None] = lambda: None
    ) -> None:
        self.hook, self.step = hook, step

    def around(self, write: Callable[[], T]) -> T:
        step = self.step()
        self.hook(b.CHECKPOINT_BUILT, step)
        result = write()
        self.hook(b.CHECKPOINT_COMMITTED, step)
        return result


class HookedSqliteSaver(SqliteSaver):
    hooks = Hooks()

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        def write() -> RunnableConfig:
            return SqliteSaver.put(self, config, checkpoint, metadata, new_versions)

        return self.hooks.around(write)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        def write() -> None:
            SqliteSaver.put_writes(self, config, writes, task_id, task_path)

        self.hooks.around(write)


if TYPE_CHECKING:
    Saver = HookedSqliteSaver | HookedPostgresSaver


def postgres_conninfo(url: str) -> str | None:
    """The libpq URL of a PostgreSQL store (its schema kept in `options`), None for SQLite."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return None
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


def sqlite_path(handle: StoreHandle) -> Path:
    return handle.workdir / FILE


@contextmanager
def open_saver(handle: StoreHandle, hooks: Hooks | None = None) -> Iterator[Saver]:
    """The world's LangGraph saver, on a connection of its own, closed on the way out (a dead
    worker leaves no connection behind)."""
    conninfo = postgres_conninfo(handle.url)
    if conninfo is not None:
        from killpoint.harness.engines.langgraph_postgres import open_postgres

        with open_postgres(conninfo, hooks or Hooks()) as saver:
            yield saver
        return
    handle.workdir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(sqlite_path(handle), check_same_thread=False, timeout=30.0)
    try:
        sqlite = HookedSqliteSaver(conn)
        sqlite.hooks = hooks or Hooks()
        yield sqlite
    finally:
        conn.close()


# -- the graph -----------------------------------------------------------------------------


def thread(workflow_id: str) -> RunnableConfig:
    return {
        "configurable": {"thread_id": workflow_id},
        "max_concurrency": 1,
        "recursion_limit": RECURSION_LIMIT,
    }


def build_graph(
    workflow: Workflow, body: Callable[[str], Callable[[Doc, RunnableConfig], Doc]]
) -> StateGraph[Doc]:
    """A node per step (named after it), each followed by the units' router."""
    graph: StateGraph[Doc] = StateGraph(Doc)
    names = [t.step.name for t in workflow.transitions]
    names = list(dict.fromkeys(names))

    def route(state: Doc) -> str:
        unit = units.next_unit(workflow, state["doc"])
        return END if unit is None else unit

    targets = [*names, END]
    graph.add_conditional_edges(START, route, targets)
    for name in names:
        graph.add_node(name, body(name))  # type: ignore[call-overload]
        graph.add_conditional_edges(name, route, targets)
    return graph


class LangGraphEngine:
    """One worker: the scenario's graph compiled on the world's saver for each call."""

    def __init__(self, env: WorkerEnv, scenario: Scenario, keying: units.Keying) -> None:
        self.env = env
        self.workflow = scenario.workflow
        self.units = units.Units(env, scenario, keying)
        self.step: str | None = None  # the node whose writes the saver saves next
        self.builder = build_graph(self.workflow, self._node)

    def _node(self, name: str) -> Callable[[Doc, RunnableConfig], Doc]:
        def node(state: Doc, config: RunnableConfig) -> Doc:
            self.step = name
            workflow_id = str(config["configurable"]["thread_id"])
            return Doc(doc=self.units.run(workflow_id, name, state["doc"]))

        return node

    @contextmanager
    def _graph(self) -> Iterator[tuple[CompiledStateGraph[Doc], Saver]]:
        with open_saver(self.env.store, Hooks(self.env.hook, lambda: self.step)) as saver:
            yield self.builder.compile(checkpointer=saver), saver

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        config = thread(workflow_id)
        with self._graph() as (graph, saver):
            if saver.get_tuple(config) is not None:
                return False
            self.step = None
            state = units.initial_state(self.workflow, input, self.env.clock.now())
            graph.invoke(Doc(doc=state), config, durability="sync", interrupt_before="*")
        return True

    def resume(self, workflow_id: str) -> Outcome:
        config = thread(workflow_id)
        with self._graph() as (graph, _):
            snapshot = graph.get_state(config)
            if snapshot.created_at is None:
                raise KillpointError(f"LangGraph has no thread {workflow_id!r}")
            doc = snapshot.values.get(CHANNEL)
            if doc is not None and doc["status"] == RunStatus.WAITING_APPROVAL.value:
                self._reopen(graph, config, doc)
            graph.invoke(None, config, durability="sync")
            snapshot = graph.get_state(config)
            step = int(snapshot.metadata["step"]) if snapshot.metadata else -1
            return units.outcome_of(self.workflow, workflow_id, snapshot.values[CHANNEL], step + 2)

    def _reopen(
        self, graph: CompiledStateGraph[Doc], config: RunnableConfig, doc: units.State
    ) -> None:
        """A run that stopped at a gate goes on (`units.reopen`), as LangGraph's own update of
        the thread, routed to the gate's step again (as if that node had just written it),
        which checks the grant now."""
        transition = self.workflow.transition_from(doc["state"])
        if transition is None:
            return
        reopened = {**units.reopen(doc), "at": self.env.clock.now()}
        self.step = transition.step.name
        graph.update_state(config, Doc(doc=reopened), as_node=transition.step.name)

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        self.units.grants.grant(workflow_id, gate, actor, self.env.clock.now(), ttl_s)


# -- the spec -------------------------------------------------------------------------------


def prepare(handle: StoreHandle) -> None:
    """Before workers are forked: the saver's tables, made once."""
    with open_saver(handle) as saver:
        saver.setup()


def reset(handle: StoreHandle) -> None:
    """Before each run: every thread's checkpoints and writes gone, and the units' files."""
    conninfo = postgres_conninfo(handle.url)
    if conninfo is not None:
        from killpoint.harness.engines.langgraph_postgres import clear_postgres

        clear_postgres(conninfo)
    else:
        path = sqlite_path(handle)
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
    units.reset_folder(handle)


def read_history(handle: StoreHandle, scenario: Scenario) -> HistoryReader:
    from killpoint.harness.engines.langgraph_reader import LangGraphReader

    return LangGraphReader(handle, scenario)


def spec(variant: str = DEFAULT_VARIANT) -> EngineSpec:
    """`--engine langgraph[:VARIANT]` (the `killpoint.engines` entry point)."""
    return framework_spec(
        "langgraph",
        lambda env, scenario: LangGraphEngine(env, scenario, units.Keying(variant)),
        variant,
        variants=VARIANTS,
        reader=read_history,
        prepare=prepare,
        reset=reset,
        description=f"LangGraph {variant}: a node per step on SqliteSaver/PostgresSaver",
        lacks=LACKS,
    )
