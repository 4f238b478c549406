"""Fixtures: fresh in-process services and reference-engine workers over a SQLite file per test.

Every worker built by `harness` shares the same store, artifact folder, services and clock, the
way successive worker processes would after a crash; dropping a worker is dying.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from pydantic import JsonValue

from killpoint.fake_services import InProcessServices
from killpoint.harness.contract.artifacts import FolderArtifacts
from killpoint.harness.contract.boundaries import BoundaryHook, no_hook
from killpoint.harness.contract.clock import FakeClock
from killpoint.harness.contract.records import Outcome, RunStatus, Versions
from killpoint.harness.engine.dispatcher import Engine
from killpoint.harness.engine.settings import Settings
from killpoint.harness.engine.store import Store
from killpoint.harness.scenario import Scenario

VERSIONS = Versions(
    plan="scenarios@1", prompt="writer@1", model_contract="structured-v1", tool_schema="tools@1"
)
LEASE_TTL = 30.0


class Died(BaseException):
    """An injected death: derives from BaseException so no engine code can catch it."""


@dataclass
class DieAt:
    """A boundary hook that kills the worker the `nth` time it reaches `boundary` (in `step`)."""

    boundary: str
    step: str | None = None
    nth: int = 1
    hits: int = 0
    seen: list[tuple[str, str | None]] = field(default_factory=list)

    def __call__(self, boundary: str, step: str | None = None) -> None:
        self.seen.append((boundary, step))
        if boundary == self.boundary and self.step in (None, step):
            self.hits += 1
            if self.hits == self.nth:
                raise Died(f"killed at {boundary} ({step})")


@dataclass
class Harness:
    services: InProcessServices
    http: httpx.Client
    store: Store
    clock: FakeClock
    artifacts: FolderArtifacts

    def engine(self, scenario: Scenario, hook: BoundaryHook = no_hook) -> Engine:
        return Engine(
            self.store,
            [scenario.workflow],
            scenario.make_adapters(self.http),
            artifacts=self.artifacts,
            clock=self.clock,
            versions=VERSIONS,
            settings=Settings(lease_ttl=LEASE_TTL),
            hook=hook,
        )

    def start(self, scenario: Scenario, run_id: str) -> tuple[str, dict[str, JsonValue]]:
        workflow_id = f"wf-{scenario.name}-{run_id}"
        inp = dict(scenario.make_input(run_id))
        self.engine(scenario).start(scenario.workflow.name, workflow_id, inp, scenario.limits)
        return workflow_id, inp

    def drive(self, scenario: Scenario, workflow_id: str, rounds: int = 5) -> Outcome:
        """Resume until terminal, answering approval gates the way the scenario says."""
        outcome = self.engine(scenario).resume(workflow_id)
        for _ in range(rounds):
            if outcome.status is not RunStatus.WAITING_APPROVAL:
                break
            for gate, policy in scenario.gates.items():
                self.engine(scenario).grant(workflow_id, gate, policy.actor, policy.ttl_s)
            outcome = self.engine(scenario).resume(workflow_id)
        return outcome

    def after_death(self) -> None:
        """Let the dead worker's lease lapse, as a restart after a real crash would."""
        self.clock.advance(LEASE_TTL + 1)


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setenv("KILLPOINT_CHECKPOINT_KEY", "test-key-not-a-secret")
    with InProcessServices() as services, services.client(timeout=1.0) as http:
        yield Harness(
            services=services,
            http=http,
            store=Store(f"sqlite:///{tmp_path}/s.sqlite"),
            clock=FakeClock(),
            artifacts=FolderArtifacts(tmp_path / "a"),
        )


@pytest.fixture
def services(harness: Harness) -> InProcessServices:
    return harness.services


@pytest.fixture
def http(harness: Harness) -> httpx.Client:
    return harness.http
