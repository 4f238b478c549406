"""An engine that is a command line, in any language: no adapter code, no import.

`--engine 'cmd:node agent.js'` (or an engine file, `harness.engines.engine_file`) makes every
worker one run of the command, started with what a worker needs in its environment (the
variables are listed in `docs/any-language.md`): the workflow id, its start message, the
tenant, a work folder and a database URL for the engine's own durable storage, the services'
URLs, a hook URL and a clock URL, all served by the worker's door (`harness.run.gateway`). The
command starts the workflow if its storage does not hold it, or resumes it, and ends printing
one status line (`killpoint-status {"status": …, "state": …}`) and exiting 0, or a line
`killpoint-error WHY` for a stop in its own words; any other end is the engine's failure.

Every request the command sends the services is a transport boundary, and a hook call one it
reports itself: at the scheduled one the harness kills the engine's whole process group with
`SIGKILL` before it hears the answer. So a command engine is crashed the way a machine dies,
in either tier, and a worker that outlives `--worker-timeout` is killed the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import JsonValue

from killpoint.contract.errors import KillpointError
from killpoint.contract.records import Outcome, RunStatus
from killpoint.fake_services.faults import SERVICES
from killpoint.harness.engines.spec import framework_spec
from killpoint.harness.protocol import CLOCK, EngineSpec, WorkerEnv
from killpoint.harness.run.gateway import WorkerDoor, gateway
from killpoint.harness.run.killswitch import die_with, latched, released
from killpoint.harness.scenario import Scenario

STATUS_PREFIX = "killpoint-status "
# A stop the engine reports in its own words (an outcome it cannot tell, a definition it
# cannot run), not a crash: the worker ends in error, as an in-process `KillpointError` does.
ERROR_PREFIX = "killpoint-error "
Action = Literal["start", "grant", "history"]
_POLL_S = 0.2  # how soon a worker latched dead elsewhere (a timeout) has its process killed
_TAIL = 2_000  # characters of a failed command's output kept as its failure


class CommandFailed(Exception):
    """A command engine ended without a status: the engine's own failure, for the oracle."""


@dataclass(frozen=True)
class Command:
    """How to run one engine's commands: each an argument list, run in `cwd`."""

    name: str
    start: tuple[str, ...]
    history: tuple[str, ...] | None = None
    grant: tuple[str, ...] | None = None
    cwd: Path = field(default_factory=Path.cwd)
    clock: Literal["harness", "wall"] = "wall"
    mcp: bool = False  # its workers are given an MCP endpoint of the services

    def spec(
        self,
        ref: str,
        *,
        scenarios: Sequence[str] = (),
        lacks: Sequence[str] = (),
        description: str = "",
    ) -> EngineSpec:
        from killpoint.harness.engines.command_history import history_reader

        # no history line carries an operator queue's entry: its check answers unknown
        missing = set(lacks) | {"queue"} | ({CLOCK} if self.clock == "wall" else set())
        if self.history is None:
            missing.add("ledger")
        return framework_spec(
            ref,
            lambda env, scenario: CommandWorker(self, env, scenario),
            reader=(
                None
                if self.history is None
                else history_reader(self, ledger="ledger" not in missing)
            ),
            name=self.name,
            description=description,
            lacks=missing,
            scenarios=scenarios,
            own_process=True,
        )


def command_engine(ref: str) -> EngineSpec:
    """`cmd:COMMAND LINE`: an engine of one start command, run in the current folder, that
    reads the wall clock and offers no history (an engine file says more)."""
    line = ref.removeprefix("cmd:").strip()
    if not line:
        raise KillpointError("--engine cmd: wants a command line after 'cmd:'")
    return Command(name=ref, start=split(line, f"--engine {ref!r}")).spec(ref)


def split(line: str, what: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(line))
    except ValueError as exc:
        raise KillpointError(f"{what}: cannot split the command line {line!r}: {exc}") from None
    if not argv:
        raise KillpointError(f"{what} is empty")
    return argv


class CommandWorker:
    """One worker of a command engine: each call runs the command once, to its end.

    Its start message is taken in the command's process, so it is taken when the engine says
    so (`start.taken` at its hook) or ends with a status, never when `start` returns."""

    defers_start = True

    def __init__(self, command: Command, env: WorkerEnv, scenario: Scenario) -> None:
        self.command = command
        self.env = env
        self.scenario = scenario
        self.messages: list[dict[str, JsonValue]] = []
        self._taken = False

    def took(self) -> None:
        if self.messages and not self._taken and self.env.took_start is not None:
            self._taken = True
            self.env.took_start()

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        """The start message, handed to the command when it runs (`KILLPOINT_INPUT`)."""
        self.messages.append(dict(input))
        return True

    def resume(self, workflow_id: str) -> Outcome:
        output = self.run("start", self.command.start, workflow_id)
        outcome = status_of(output, workflow_id, self.command.name)
        self.took()  # it ended with a status: whatever it was handed, it has
        return outcome

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        if self.command.grant is None:
            raise KillpointError(
                f"{self.command.name} has no grant command: it cannot be approved at {gate!r}"
            )
        extra = {"KILLPOINT_GATE": gate, "KILLPOINT_ACTOR": actor, "KILLPOINT_TTL_S": repr(ttl_s)}
        self.run("grant", self.command.grant, workflow_id, extra)

    def run(
        self,
        action: Action,
        argv: tuple[str, ...],
        workflow_id: str,
        extra: Mapping[str, str] | None = None,
    ) -> str:
        """Run `argv` as this worker, to its end; its standard output. A death delivered at
        its door (or latched by a timeout) kills its process group and is raised here."""
        folder = Path(tempfile.mkdtemp(prefix=f"{self.env.owner}-", dir=self._workers()))
        door = WorkerDoor(
            self.env.http, self.env.hook, self.env.clock, kill=lambda: None, took=self.took
        )
        base = gateway().open(door)
        endpoint = _mcp_endpoint(f"{base}/services") if self.command.mcp else None
        environ = {
            **os.environ,
            **worker_environ(self.env, self.scenario, workflow_id, base),
            **self._messages(folder),
            "KILLPOINT_ACTION": action,
            **(extra or {}),
        }
        if endpoint is not None:
            environ["KILLPOINT_MCP_URL"] = endpoint
        out, err = folder / "stdout", folder / "stderr"
        try:
            with out.open("wb") as stdout, err.open("wb") as stderr:
                process = subprocess.Popen(
                    argv,
                    cwd=self.command.cwd,
                    env=environ,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    process_group=0,  # its own group: a death kills all it started
                )
        except OSError as exc:
            gateway().close_door(base)
            raise KillpointError(f"{self.command.name}: cannot run {argv[0]!r}: {exc}") from None
        group = process.pid
        die_with(group)
        door.kill = lambda: _kill(group)
        try:
            code = _wait(process, door, self.env.hook)
        finally:
            _kill(group)  # whatever it left running dies with it
            released(group)
            gateway().close_door(base)
            if endpoint is not None:
                _close_mcp(endpoint)
        if door.death is not None:
            raise door.death
        said = out.read_text(errors="replace")
        stops = [x for x in said.splitlines() if x.startswith(ERROR_PREFIX)]
        if stops:
            raise KillpointError(stops[-1].removeprefix(ERROR_PREFIX))
        if code != 0:
            raise CommandFailed(_failure(argv, code, out, err))
        return said

    def _workers(self) -> Path:
        folder = self.env.workdir / "command-workers"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _messages(self, folder: Path) -> dict[str, str]:
        """The start messages this worker got: the first as `KILLPOINT_INPUT`, all (a
        redelivery may follow, and may lie) as lines of `KILLPOINT_MESSAGES`."""
        if not self.messages:
            return {}
        first, every = folder / "input.json", folder / "messages.jsonl"
        first.write_text(json.dumps(self.messages[0]))
        every.write_text("".join(json.dumps(m) + "\n" for m in self.messages))
        return {"KILLPOINT_INPUT": str(first), "KILLPOINT_MESSAGES": str(every)}


def worker_environ(
    env: WorkerEnv, scenario: Scenario, workflow_id: str, door: str
) -> dict[str, str]:
    """What a command worker is told (`docs/any-language.md` lists each)."""
    workdir = env.workdir / "engine"
    workdir.mkdir(parents=True, exist_ok=True)
    services = f"{door}/services"
    environ = {
        "KILLPOINT_WORKFLOW_ID": workflow_id,
        "KILLPOINT_SCENARIO": scenario.name,
        "KILLPOINT_TENANT": env.tenant,
        "KILLPOINT_OWNER": env.owner,
        "KILLPOINT_WORKDIR": str(workdir),
        "KILLPOINT_DATABASE_URL": env.store_url,
        "KILLPOINT_SERVICES_URL": services,
        "KILLPOINT_HOOK_URL": f"{door}/hook",
        "KILLPOINT_CLOCK_URL": f"{door}/clock",
        "KILLPOINT_LEASE_TTL": repr(env.lease_ttl),
        "KILLPOINT_PLAN_VERSION": env.versions.plan,
        "KILLPOINT_VERSIONS": env.versions.model_dump_json(),
    }
    if env.deploy is not None:
        environ["KILLPOINT_DEPLOY"] = env.deploy.model_dump_json()
    for service in sorted(SERVICES):
        environ[f"KILLPOINT_{service.upper()}_URL"] = f"{services}/{service}"
    if env.secrets is not None:
        environ.update(env.secrets.environ())
    return environ


def status_of(output: str, workflow_id: str, name: str) -> Outcome:
    """The outcome a command's last status line says; a `CommandFailed` naming what is wrong."""
    lines = [x for x in output.splitlines() if x.startswith(STATUS_PREFIX)]
    if not lines:
        raise CommandFailed(f"{name} exited 0 without a status line ({STATUS_PREFIX}{{…}})")
    try:
        doc = json.loads(lines[-1].removeprefix(STATUS_PREFIX))
        status = RunStatus(doc["status"])
        state = doc.get("state", "")
        sequence = doc.get("sequence", 0)
        reason = doc.get("reason", "")
        if not isinstance(state, str) or not isinstance(sequence, int):
            raise TypeError("state is a string, sequence an integer")
        if not isinstance(reason, str):
            raise TypeError("reason is a string")
    except (ValueError, KeyError, TypeError) as exc:
        raise CommandFailed(f"{name}: a status line it printed is malformed: {exc}") from None
    return Outcome(workflow_id, status, state, sequence, reason)


def _wait(process: subprocess.Popen[bytes], door: WorkerDoor, hook: object) -> int:
    while True:
        try:
            return process.wait(timeout=_POLL_S)
        except subprocess.TimeoutExpired:
            death = latched(hook)
            if death is not None:  # a timeout latched it, or it died on a thread of the door
                door.die(death)


def _kill(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _failure(argv: Sequence[str], code: int, out: Path, err: Path) -> str:
    how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    said = (err.read_text(errors="replace") or out.read_text(errors="replace")).strip()
    return f"{shlex.join(argv)} {how}" + (f": {said[-_TAIL:]}" if said else "")


def _mcp_endpoint(services: str) -> str:
    """An MCP server of the services whose tools call them through the worker's door."""
    from killpoint.fake_services.mcp import shared_endpoint

    return shared_endpoint().open(services, timeout=30.0)  # a pair may hold it a while


def _close_mcp(url: str) -> None:
    from killpoint.fake_services.mcp import shared_endpoint

    shared_endpoint().close_url(url)
