"""An engine that stays quiet: what the foreign-death tests run beside the harness."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract.records import Outcome, RunStatus
from killpoint.harness.protocol import WorkerEnv
from killpoint.harness.scenario import Scenario


class Quiet:
    """Completes at once; the subclasses each misbehave in one way."""

    def __init__(self, env: WorkerEnv, scenario: Scenario) -> None:
        self.env = env
        self.log = env.workdir / "log.txt"

    def note(self, line: str) -> None:
        with self.log.open("a") as f:
            f.write(f"{self.env.owner} {line}\n")

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        return True

    def resume(self, workflow_id: str) -> Outcome:
        return Outcome(workflow_id, RunStatus.COMPLETED, "sent", 1)

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None: ...
