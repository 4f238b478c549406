"""Any Python engine run as a command engine: `python -m killpoint.harness.engines.as_command REF`.

It is the command-engine protocol's own conformance test: the reference engine (or a team's
`module:factory`, a mutant, a framework adapter) behind the protocol a TypeScript or Go engine
speaks, so the two ways of testing an engine can be compared run by run. It builds the worker
an in-process engine would get from the environment alone: an HTTP client of the services at
`KILLPOINT_SERVICES_URL`, a hook that posts each boundary to `KILLPOINT_HOOK_URL` and waits for
the answer, the clock at `KILLPOINT_CLOCK_URL`, and a store at `KILLPOINT_DATABASE_URL`.

    killpoint run --engine 'cmd:python -m killpoint.harness.engines.as_command reference'

It reads the world's clock, so an engine file that names it says `clock = "harness"`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import httpx

from killpoint.contract.boundaries import START_TAKEN
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import DeployNotice, Versions
from killpoint.contract.secrets import CHECKPOINT_KEY_ENV, SERVICE_TOKEN_ENV, Secrets
from killpoint.harness.catalogue import installed
from killpoint.harness.engines.command import ERROR_PREFIX, STATUS_PREFIX
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.protocol import EngineUnderTest, Recorded, StoreHandle, WorkerEnv
from killpoint.harness.scenario import Scenario


class HookOverHttp:
    """A boundary hook that asks the harness, and waits for its answer (or its SIGKILL)."""

    def __init__(self, url: str, http: httpx.Client) -> None:
        self.url, self.http = url, http

    def __call__(self, boundary: str, step: str | None = None) -> None:
        answer = self.http.post(self.url, json={"boundary": boundary, "step": step})
        answer.raise_for_status()


class ClockOverHttp:
    """The world clock, read (and slept on) at the harness."""

    def __init__(self, url: str, http: httpx.Client) -> None:
        self.url, self.http = url, http

    def now(self) -> float:
        return float(self.http.get(self.url).json()["now"])

    def sleep(self, seconds: float) -> None:
        self.http.post(self.url, json={"sleep": seconds}).raise_for_status()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m killpoint.harness.engines.as_command ENGINE", file=sys.stderr)
        return 2
    env = os.environ
    try:
        spec = load_engine(argv[0])
        workflow_id = env["KILLPOINT_WORKFLOW_ID"]
        store = StoreHandle(
            url=env["KILLPOINT_DATABASE_URL"],
            workdir=Path(env["KILLPOINT_WORKDIR"]),
            tenant=env["KILLPOINT_TENANT"],
            label="",
        )
        scenario = installed().scenario(env["KILLPOINT_SCENARIO"])
        if env.get("KILLPOINT_ACTION") == "history":
            records = Recorded(spec.history_reader(store, scenario), workflow_id)
            _print_history(records, workflow_id)
            return 0
    except KeyError as exc:
        print(
            f"as_command: {exc.args[0]} is not set: run me as a killpoint engine", file=sys.stderr
        )
        return 2
    except KillpointError as exc:
        print(f"as_command: {exc}", file=sys.stderr)
        return 2
    with (
        httpx.Client(timeout=30.0) as harness,
        httpx.Client(base_url=env["KILLPOINT_SERVICES_URL"], timeout=5.0) as http,
    ):
        deploy = env.get("KILLPOINT_DEPLOY")
        worker = WorkerEnv(
            owner=env["KILLPOINT_OWNER"],
            store=store,
            http=http,
            hook=HookOverHttp(env["KILLPOINT_HOOK_URL"], harness),
            clock=ClockOverHttp(env["KILLPOINT_CLOCK_URL"], harness),
            versions=Versions.model_validate_json(env["KILLPOINT_VERSIONS"]),
            lease_ttl=float(env["KILLPOINT_LEASE_TTL"]),
            deploy=None if deploy is None else DeployNotice.model_validate_json(deploy),
            secrets=Secrets(
                checkpoint_key=env.get(CHECKPOINT_KEY_ENV, ""),
                service_token=env.get(SERVICE_TOKEN_ENV, ""),
            ),
        )
        try:
            return _act(spec.factory(worker, scenario), worker, scenario, workflow_id)
        except KillpointError as exc:  # a stop in the engine's words, not its crash
            print(f"{ERROR_PREFIX}{type(exc).__name__}: {exc}", flush=True)
            return 1


def _act(engine: EngineUnderTest, worker: WorkerEnv, scenario: Scenario, workflow_id: str) -> int:
    """Grant, or take the start messages and resume, as the action asks."""
    env = os.environ
    if env["KILLPOINT_ACTION"] == "grant":
        gate, actor, ttl = env["KILLPOINT_GATE"], env["KILLPOINT_ACTOR"], env["KILLPOINT_TTL_S"]
        engine.grant(workflow_id, gate, actor, float(ttl))
        return 0
    messages = env.get("KILLPOINT_MESSAGES")
    if messages is not None:
        for message in Path(messages).read_text().splitlines():
            engine.start(scenario, workflow_id, json.loads(message))
        worker.hook(START_TAKEN)  # its start() returned: the message is durable
    outcome = engine.resume(workflow_id)
    said = {
        "status": outcome.status.value,
        "state": outcome.state,
        "sequence": outcome.sequence,
        "reason": outcome.reason,
    }
    print(STATUS_PREFIX + json.dumps(said), flush=True)
    return 0


def _print_history(records: Recorded, workflow_id: str) -> None:
    lines = [
        *(
            {"record": "checkpoint", **c.model_dump(mode="json")}
            for c in records.checkpoints(workflow_id)
        ),
        *({"record": "effect", **e.model_dump(mode="json")} for e in records.effects(workflow_id)),
        *(
            {"record": "approval", **a.model_dump(mode="json")}
            for a in records.approvals(workflow_id)
        ),
    ]
    compacted = records.compacted_below(workflow_id)
    if compacted:
        lines.append({"record": "compacted", "below": compacted})
    sys.stdout.write("".join(json.dumps(x) + "\n" for x in lines))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
