"""The protocol between the harness and an engine under test, ours or a team's own.

The harness builds one engine object per worker from a `WorkerEnv` and drives it through three
calls (`start`, `resume`, `grant`). It judges the run from outside: boundary hits the engine
reports through `env.hook` (and the harness observes at the HTTP transport), the services' own
journals, and the engine's store read through a `HistoryReader` — never engine internals.
An engine that cannot report some boundary or some part of its history still gets judged on
the rest; the checkers answer `unknown` where they lack evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, JsonValue

from killpoint.harness.contract.boundaries import BoundaryHook
from killpoint.harness.contract.clock import Clock
from killpoint.harness.contract.records import ApprovalRecord, EffectRecord, Outcome, Versions

if TYPE_CHECKING:
    from killpoint.scenarios.base import Scenario


@dataclass(frozen=True)
class WorkerEnv:
    """What one worker is built from. A new one is made for every worker the harness starts."""

    owner: str
    store_url: str
    http: httpx.Client
    hook: BoundaryHook
    clock: Clock
    versions: Versions
    tenant: str
    workdir: Path
    lease_ttl: float
    shared: Mapping[str, Any]  # objects an in-process tier may share (an open store)


class EngineUnderTest(Protocol):
    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        """Accept the start message; False when the workflow already exists (redelivery)."""
        ...

    def resume(self, workflow_id: str) -> Outcome:
        """Run until the workflow is terminal or waits for a human."""
        ...

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None: ...


class EngineFactory(Protocol):
    def __call__(self, env: WorkerEnv, scenario: Scenario) -> EngineUnderTest: ...


class CheckpointView(BaseModel):
    """A committed checkpoint as the oracle sees it; engine-neutral, nothing trusted."""

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
    size: int | None = None  # bytes stored, for storage-growth metrics
    trusted: bool = True


class HistoryReader(Protocol):
    """Read access to an engine's own durable records, for the oracle."""

    def checkpoints(self, workflow_id: str) -> list[CheckpointView]: ...

    def effects(self, workflow_id: str) -> list[EffectRecord]: ...

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]: ...

    def compacted_below(self, workflow_id: str) -> int: ...
