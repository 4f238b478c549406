"""The protocol between the harness and an engine under test, ours or a team's own.

The harness builds one engine object per worker from a `WorkerEnv` and drives it through three
calls (`start`, `resume`, `grant`), and a fourth an engine may offer (`control`: an operator's
control, for a schedule that names one, `harness.operator`). It judges the run from outside:
boundary hits the engine reports through `env.hook` (and the harness observes at the HTTP
transport), the services' own journals, and the engine's durable records read through a
`HistoryReader` — never the engine's insides. A `StoreHandle` says where an engine keeps its
state in one world (a database URL of its own and a work folder); the engine's adapter, not the
harness, knows what lives there.

An `EngineSpec` bundles what the harness needs of one engine: the worker factory, and
optionally a history reader, a tamper hook (to stage the seeds' tampered, wrong-tenant and
old-schema checkpoints), a hook that prepares a world before workers are forked and one that
resets a store to empty before each run (without it, each run gets a store of its own). An engine
that offers no reader or tamper hook is still judged on the rest; the checkers answer
`unknown` where they lack evidence, and a case whose tampering cannot be staged is unknown.
A reader may also read the engine's durable operator queue (`QueueReader`) and its audit trail
of operator controls (`AuditReader`), optional as `OperatedEngine` is for workers: the oracle
judges a run's end from the durable records, never from what a worker returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import httpx
from pydantic import BaseModel, ConfigDict, JsonValue

from killpoint.contract.boundaries import BoundaryHook
from killpoint.contract.clock import Clock
from killpoint.contract.records import (
    ApprovalRecord,
    DeployNotice,
    EffectRecord,
    Outcome,
    Versions,
)
from killpoint.contract.secrets import Secrets

if TYPE_CHECKING:
    from killpoint.harness.scenario import Scenario

T = TypeVar("T")


class Shared:
    """Objects an engine's adapter keeps open for every worker of one world (a connection pool,
    a compiled schema), so a worker of the in-process tier does not reopen them; closed with
    the world. A forked worker inherits them and calls `after_fork` on each that has one."""

    def __init__(self) -> None:
        self._objects: dict[str, Any] = {}

    def get(self, key: str, make: Callable[[], T]) -> T:
        if key not in self._objects:
            self._objects[key] = make()
        value: T = self._objects[key]
        return value

    def after_fork(self) -> None:
        for value in self._objects.values():
            if hasattr(value, "after_fork"):
                value.after_fork()

    def close(self) -> None:
        objects, self._objects = self._objects, {}
        for value in reversed(objects.values()):
            if hasattr(value, "close"):
                value.close()


@dataclass(frozen=True)
class StoreHandle:
    """Where an engine keeps its durable state in one world: a database URL that belongs to this
    world alone (a SQLite file, or a PostgreSQL URL whose search_path is a schema of its own)
    and a work folder. `scratch`: the store must survive the process deaths the harness
    injects, not a power loss, so an engine may skip fsyncs."""

    url: str
    workdir: Path
    tenant: str
    label: str  # the URL as a human may see it: no password
    scratch: bool = True
    shared: Shared = field(default_factory=Shared, compare=False, repr=False)


@dataclass(frozen=True)
class WorkerEnv:
    """What one worker is built from. A new one is made for every worker the harness starts.

    Attributes:
        owner: the worker's name, for leases and audit (`worker-0`, `worker-1`, …).
        store: where the engine keeps its durable state in this world (`StoreHandle`).
        http: a client to the services; the harness watches (and faults) it at the transport.
        hook: the boundary hook: call it wherever the worker could die.
        clock: the world's clock (`Clock`): read and wait on it, never on the wall clock.
        versions: what this worker runs (a deploy between workers changes them).
        lease_ttl: the lease time the harness expects the engine to use, in clock seconds.
        deploy: a deploy in progress, as the worker is told of it.
        secrets: the world's secrets (a sealing key, the services' token), also in the
            environment (`killpoint.contract.secrets`): use them, never store them; each is a
            canary the oracle looks for after the run (`secrets_kept`). None outside a world.
        took_start: for an engine whose `start` returns before the message is durably taken
            (class attribute `defers_start = True`): call it once it is; until then each
            later worker is handed the start message again, as a queue redelivers.
    """

    owner: str
    store: StoreHandle
    http: httpx.Client
    hook: BoundaryHook
    clock: Clock
    versions: Versions
    lease_ttl: float
    deploy: DeployNotice | None = None
    secrets: Secrets | None = None
    took_start: Callable[[], None] | None = None

    @property
    def store_url(self) -> str:
        return self.store.url

    @property
    def workdir(self) -> Path:
        return self.store.workdir

    @property
    def tenant(self) -> str:
        return self.store.tenant

    @property
    def shared(self) -> Shared:
        return self.store.shared


class EngineUnderTest(Protocol):
    """What the harness drives: one object per worker, built by an `EngineFactory`. A worker may
    die at any boundary hook and any request; the next is a new object on the same store."""

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        """Accept the start message; False when the workflow already exists (redelivery)."""
        ...

    def resume(self, workflow_id: str) -> Outcome:
        """Run until the workflow is terminal or waits for a human."""
        ...

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        """A human approves the pending request at `gate`, valid for `ttl_s` on `env.clock`."""
        ...


@runtime_checkable
class OperatedEngine(Protocol):
    """An engine whose workers also take an operator's control (optional: `harness.operator`)."""

    def control(self, workflow_id: str, name: str, actor: str, reason: str) -> Outcome:
        """Apply the operator control `name` (reconcile, retry, compensate, request-approval,
        branch, terminate) as `actor`, for `reason`; a `KillpointError` when it is refused."""
        ...


class EngineFactory(Protocol):
    """`factory(env, scenario) -> engine`: builds one worker's engine (what `--engine
    module:factory` names, or `EngineSpec.factory`)."""

    def __call__(self, env: WorkerEnv, scenario: Scenario) -> EngineUnderTest: ...


class CheckpointRecord(BaseModel):
    """A committed checkpoint as the oracle sees it: engine-neutral, nothing trusted.

    Attributes:
        sequence: 1, 2, … in the engine's order of commits; two checkpoints written from one
            parent (a fork) keep one number.
        state: the workflow state it records.
        status: the run's status then (`RunStatus` values).
        run_id: the lineage it belongs to; `parent_run_id` and `decision` (`branch`,
            `restart`, `migrate`) for one that starts a new lineage on purpose.
        outputs: the pure steps' outputs it holds (verified completion validates them).
        fencing_token: the lease token the row was written under, where the engine has one.
        created_at: when it was committed, on the world clock; `size`: its bytes stored.
        trusted: False for a row that failed its engine's integrity check (only the row's own
            fields are then known).
    """

    model_config = ConfigDict(frozen=True)

    sequence: int
    state: str
    status: str
    reason: str = ""
    run_id: str | None = None
    parent_run_id: str | None = None
    decision: str | None = None
    budget: dict[str, float] | None = None
    approvals: list[dict[str, JsonValue]] = []
    outputs: dict[str, JsonValue] = {}
    fencing_token: int | None = None
    created_at: float
    size: int | None = None
    trusted: bool = True
    versions: Versions | None = None  # the executable contract it was written under
    input: dict[str, JsonValue] | None = None  # the validated input it carries, where shown


class HistoryReader(Protocol):
    """Read access to an engine's own durable records, for the oracle.

    It is built from the world's `StoreHandle` and the run's `Scenario` (`ReaderFactory`, as a
    worker is from its `WorkerEnv` and the scenario), in the campaign's process, after the run's
    workers have ended: the scenario's workflow is the run's own, a team's scenario as much as a
    catalogue's, so a reader never looks a workflow up by name. Its records
    are neutral: times on the world clock the workers were given (`WorkerEnv.clock`, so store
    them where the engine writes), and checkpoints numbered 1, 2, … in the engine's own order
    of commits, whatever the engine numbers them (LangGraph's steps start at -1). Two records
    with one number are a fork, and must stay two: that is what the sequence checker looks
    for. An engine that keeps no effect ledger returns no effects and says so with a class
    attribute `ledger = False`, so the checkers that read one answer unknown."""

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]: ...

    def effects(self, workflow_id: str) -> list[EffectRecord]: ...

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]: ...

    def compacted_below(self, workflow_id: str) -> int: ...


class QueuedRun(BaseModel):
    """A run as an engine's durable operator queue holds it: what a person reads to act on it.

    Seed 000: "a recovery failure should enter an operator queue with enough evidence to act".
    `reason` is the status it waits in (needs_review, quarantined, budget_exhausted,
    dead_lettered …), `detail` why, `state` where it stopped, `in_doubt` the operation ids of
    its effects whose outcome is in doubt (what a person must reconcile first)."""

    model_config = ConfigDict(frozen=True)

    workflow_id: str
    reason: str
    detail: str = ""
    state: str = ""
    in_doubt: list[str] = []
    controls: list[str] | None = None  # the controls the queue allows now; None: it does not say


@runtime_checkable
class QueueReader(Protocol):
    """A history reader that also reads the engine's durable operator queue (optional, as
    `OperatedEngine` is for workers): the oracle judges that a run which stopped for a person
    is in it, with its evidence. A reader without it is an engine that keeps no queue, and the
    check that needs one answers unknown."""

    def queued(self, workflow_id: str) -> QueuedRun | None:
        """The queue's entry of the workflow; None when the queue does not hold it."""
        ...


class AuditedControl(BaseModel):
    """An operator's control as an engine's durable audit trail holds it: which, by whom, and
    the checkpoints it moved the run between (`from_sequence` → `to_sequence`), under which
    fencing token."""

    model_config = ConfigDict(frozen=True)

    control: str
    actor: str
    at: float
    from_sequence: int
    to_sequence: int
    to_status: str
    fencing_token: int | None = None


@runtime_checkable
class AuditReader(Protocol):
    """A history reader that also reads the engine's audit trail of operator controls
    (optional): the oracle holds each control the harness's operator applied to it, and takes
    a move a control made as a person's, even when the worker died before saying so."""

    def audit(self, workflow_id: str) -> list[AuditedControl]:
        """Every control that acted on the workflow, oldest first."""
        ...


class NoHistory:
    """The history reader of an engine that exposes none: the oracle sees only the outside."""

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]:
        return []

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        return []

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        return []

    def compacted_below(self, workflow_id: str) -> int:
        return 0


class Recorded(NoHistory):
    """One workflow's records, read from an engine's reader once, up front."""

    def __init__(self, reader: HistoryReader, workflow_id: str) -> None:
        self._checkpoints = reader.checkpoints(workflow_id)
        self._effects = reader.effects(workflow_id)
        self._approvals = reader.approvals(workflow_id)
        self._compacted = reader.compacted_below(workflow_id)
        self.ledger = bool(getattr(reader, "ledger", True))
        self.keeps_queue = isinstance(reader, QueueReader)
        self._queued = reader.queued(workflow_id) if isinstance(reader, QueueReader) else None
        self._audit = reader.audit(workflow_id) if isinstance(reader, AuditReader) else None

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]:
        return self._checkpoints

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        return self._effects

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        return self._approvals

    def compacted_below(self, workflow_id: str) -> int:
        return self._compacted

    def queued(self, workflow_id: str) -> QueuedRun | None:
        return self._queued

    def audited(self) -> list[AuditedControl] | None:
        """The audit trail read, or None when the engine's reader reads none."""
        return self._audit


# What an engine lacks that runs one worker per process (DBOS, a process-wide singleton): the
# plan gives it no in-process pairs, and a two-worker case in process is not applicable.
SHARED_PROCESS = "second worker per process"
# What an engine lacks whose workers run whatever workflow its backend hands them (DBOS recovers
# every pending workflow of the application when it launches; a Temporal worker takes any task of
# its queue): a neighbour's worker may do the run's work, signed as the neighbour, so the plan
# gives it no neighbours (`harness.campaign.neighbour_plan`) and isolation beside one is unknown.
ANY_WORKFLOW = "one workflow per worker"
# What an engine lacks whose workers cannot run in a forked child (a runtime that does not
# survive a fork: Temporal's Rust core crashes now and then in one): no real-tier pass
# (`harness.campaign.real_pass`) in its in-process campaigns and hunts.
FORKED = "a worker in a forked process"
# What an engine lacks that reads the wall clock, not the world clock it is offered
# (`WorkerEnv.clock`, a command's `KILLPOINT_CLOCK_URL`): a downtime or a clock jump does not
# happen to it, so a case that needs one is not applicable and the time checks answer unknown.
CLOCK = "the harness's clock"
# (the world's store, the run's scenario): the engine's reader of that run's records
ReaderFactory = Callable[[StoreHandle, "Scenario"], HistoryReader]
# Alter the latest durable state of a workflow the way the named kind says; the sequence of the
# checkpoint it altered, or None if this engine cannot stage that kind.
TamperHook = Callable[[StoreHandle, str, str], int | None]
PrepareHook = Callable[[StoreHandle], None]
# Empty a store of everything any earlier run left in it (rows and work files), as if new.
ResetHook = Callable[[StoreHandle], None]
# (the world's store, the run's workflow id, the folder to keep it in)
KeepHook = Callable[[StoreHandle, str, Path], None]


@dataclass(frozen=True)
class EngineSpec:
    """An engine under test: how to build a worker, and what else the harness may ask of it.

    `ref` is how `--engine` names it ("reference", "mutant:NAME", "module:factory"), recorded in
    every fault schedule so `killpoint replay FILE` alone rebuilds the same engine; None for an
    engine handed over as an object, which only its own test can rebuild. `prepare` runs in
    the parent before workers are forked (the real tier): open and warm what they inherit.
    `reset` runs before every run, so a run's verdict depends on its schedule alone; an engine
    without one gets a fresh database and work folder per run instead, which costs it a reopen.
    `keep` copies one run's records to a store at a folder of the campaign's, for the runs
    that ended waiting for a person (the operator queue a campaign leaves behind)."""

    name: str
    factory: EngineFactory
    reader: ReaderFactory | None = None
    tamper: TamperHook | None = None
    prepare: PrepareHook | None = None
    reset: ResetHook | None = None
    keep: KeepHook | None = None
    ref: str | None = None
    description: str = ""  # for a mutant: the mistake it makes
    # what the engine does not keep ("budget", "fencing", "tenant", "ledger", "approval" …):
    # said in the report; the checks that need it answer unknown, never a violation
    lacks: frozenset[str] = frozenset()
    # the scenarios it implements (a command engine's own business logic); empty: any of them
    scenarios: tuple[str, ...] = ()
    # each worker is a process of its own (a command): every death is a SIGKILL in either tier
    own_process: bool = False

    def history_reader(self, store: StoreHandle, scenario: Scenario) -> HistoryReader:
        return NoHistory() if self.reader is None else self.reader(store, scenario)
