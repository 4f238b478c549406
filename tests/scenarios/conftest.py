"""Fixtures: fresh in-process services and a reference engine over a SQLite file per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fake_services import FaultPlan, FaultRule, InProcessServices
from harness import Engine, FakeClock, Store, Versions
from harness.artifacts import FolderArtifacts
from harness.boundaries import BoundaryHook, no_hook
from scenarios.base import Scenario

VERSIONS = Versions(
    plan="scenarios@1", prompt="writer@1", model_contract="structured-v1", tool_schema="tools@1"
)


@pytest.fixture
def services() -> Iterator[InProcessServices]:
    with InProcessServices() as running:
        yield running


@pytest.fixture
def http(services: InProcessServices) -> Iterator[httpx.Client]:
    with services.client(timeout=1.0) as client:
        yield client


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("KILLPOINT_CHECKPOINT_KEY", "test-key-not-secret")
    yield Store(f"sqlite:///{tmp_path}/s.sqlite")


class Worker:
    """Builds engines that share the stores, as successive worker processes would."""

    def __init__(
        self, scenario: Scenario, store: Store, http: httpx.Client, clock: FakeClock, root: Path
    ) -> None:
        self.scenario = scenario
        self.store = store
        self.http = http
        self.clock = clock
        self.artifacts = FolderArtifacts(root / "a")

    def engine(self, hook: BoundaryHook = no_hook) -> Engine:
        return Engine(
            self.store,
            [self.scenario.workflow],
            self.scenario.make_adapters(self.http),
            artifacts=self.artifacts,
            clock=self.clock,
            versions=VERSIONS,
            hook=hook,
        )


@pytest.fixture
def worker_for(store: Store, http: httpx.Client, clock: FakeClock, tmp_path: Path) -> object:
    def build(scenario: Scenario) -> Worker:
        return Worker(scenario, store, http, clock, tmp_path)

    return build


def plan(*rules: FaultRule) -> FaultPlan:
    return FaultPlan.of(*rules)
