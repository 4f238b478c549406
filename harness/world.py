"""The world a campaign runs in: a store of its own, one set of services, one clock.

Shared by every run of a campaign for speed (creating a database per run would cost more than
the run). Runs stay independent because each uses its own workflow id and business keys, and the
services' journal and fault counters are reset before each run. The world hands the engine
under test a `StoreHandle` — a database URL of this world alone and a work folder — and never
opens the store itself: what lives there is the engine's. A worker's death drops the worker's
objects; what an engine's adapter keeps open for all workers (`StoreHandle.shared`) closes
with the world.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Protocol

import httpx

from killpoint.fake_services import FaultPlan, InProcessServices, Journal, ServiceClock
from killpoint.harness.contract.records import Versions
from killpoint.harness.databases import label, world_database
from killpoint.harness.protocol import StoreHandle

EPOCH = 1_800_000_000.0
BASE_VERSIONS = Versions(
    plan="plan@1", prompt="prompt@1", model_contract="contract@1", tool_schema="tools@1"
)
TENANT = "tenant-a"


class Services(Protocol):
    """The outside world as a run sees it: in-process apps or a real server process."""

    @property
    def journal(self) -> Journal: ...

    @property
    def base_url(self) -> str: ...

    def transport(self) -> httpx.BaseTransport: ...

    def reset(self) -> None: ...

    def set_plan(self, plan: FaultPlan) -> None: ...

    def close(self) -> None: ...


class WorldClock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...

    def advance(self, seconds: float) -> None: ...


class SharedTime:
    """The engine's clock and the services' clock are one: a jump moves both."""

    def __init__(self, service_clock: ServiceClock) -> None:
        self.service_clock = service_clock

    def now(self) -> float:
        return self.service_clock.now()

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        self.service_clock.advance(seconds)


def store_for(root: Path, url: str | None = None, tenant: str = TENANT) -> StoreHandle:
    """A store of this world alone under `root` (see `killpoint.harness.databases`)."""
    database = world_database(url, root)
    return StoreHandle(url=database, workdir=root, tenant=tenant, label=label(database))


@dataclass
class World:
    store: StoreHandle
    services: Services
    clock: WorldClock
    lease_ttl: float = 30.0
    versions: Versions = BASE_VERSIONS
    runs: int = field(default=0)

    @classmethod
    def open(cls, workdir: str | Path, store_url: str | None = None) -> World:
        root = Path(workdir)
        root.mkdir(parents=True, exist_ok=True)
        service_clock = ServiceClock(start=EPOCH)
        return cls(
            store=store_for(root, store_url),
            services=InProcessServices(clock=service_clock),
            clock=SharedTime(service_clock),
        )

    @property
    def workdir(self) -> Path:
        return self.store.workdir

    @property
    def tenant(self) -> str:
        return self.store.tenant

    def close(self) -> None:
        try:
            self.store.shared.close()
        finally:
            self.services.close()

    def __enter__(self) -> World:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
