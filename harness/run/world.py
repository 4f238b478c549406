"""The world a campaign runs in: a store of its own, one set of services, one clock.

Every run starts from a world no earlier run has touched (`World.begin_run`), so its verdict
depends on its schedule alone and `killpoint replay` in a fresh world gives the same one: the
services are emptied, the clock goes back to its start, and the store is emptied by the
engine's reset hook, which keeps its connections (cheap), or, for an engine without one, is
replaced by a fresh database and work folder (a reopen per run). The world hands the engine
under test a `StoreHandle` — a database URL of this world alone and a work folder — and never
opens the store itself: what lives there is the engine's. A worker's death drops the worker's
objects; what an engine's adapter keeps open for all workers (`StoreHandle.shared`) closes
with the world, or with its run's store.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Protocol

import httpx

from killpoint.contract.records import Versions
from killpoint.fake_services import FaultPlan, InProcessServices, Journal, ServiceClock
from killpoint.harness.protocol import EngineSpec, StoreHandle
from killpoint.harness.run.canary_scan import Canaries
from killpoint.harness.run.databases import drop_scratch, label, pins_schema, world_database
from killpoint.harness.run.db_loss import StoreFile
from killpoint.harness.run.deploy_routing import BASE_VERSIONS as BASE_VERSIONS
from killpoint.harness.run.folders import empty

EPOCH = 1_800_000_000.0
TENANT = "tenant-a"


class Services(Protocol):
    """The outside world as a run sees it: in-process apps or a real server process."""

    @property
    def journal(self) -> Journal: ...

    @property
    def base_url(self) -> str: ...

    def transport(self, *, faults: bool = True) -> httpx.BaseTransport: ...

    def reset(self) -> None: ...

    def set_plan(self, plan: FaultPlan) -> None: ...

    def close(self) -> None: ...


class WorldClock(Protocol):
    def now(self) -> float: ...

    def set(self, t: float) -> None: ...

    def sleep(self, seconds: float) -> None: ...

    def advance(self, seconds: float) -> None: ...


class SharedTime:
    """The engine's clock and the services' clock are one: a jump moves both."""

    def __init__(self, service_clock: ServiceClock) -> None:
        self.service_clock = service_clock

    def now(self) -> float:
        return self.service_clock.now()

    def set(self, t: float) -> None:
        self.service_clock.set(t)

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        self.service_clock.advance(seconds)


def store_for(root: Path, url: str | None = None, tenant: str = TENANT) -> StoreHandle:
    """A store of this world alone under `root` (see `killpoint.harness.run.databases`)."""
    database = world_database(url, root)
    return StoreHandle(url=database, workdir=root, tenant=tenant, label=label(database))


@dataclass
class World:
    store: StoreHandle
    services: Services
    clock: WorldClock
    lease_ttl: float = 30.0
    worker_timeout_s: float = 120.0  # wall time a worker may take before it counts as hung
    versions: Versions = BASE_VERSIONS
    runs: int = field(default=0)
    store_url: str | None = None  # as the world was opened with: how a fresh store is made
    root: Path | None = None  # the harness's own folder (the store's work folder by default)
    _own: StoreHandle | None = field(default=None, repr=False)  # a fresh store of one run
    _first: StoreHandle | None = field(default=None, repr=False)  # the store it opened with
    _file: StoreFile | None = field(default=None, repr=False)  # its SQLite file, as last seen
    # the secrets every worker is handed, and the scans for them after each run
    canaries: Canaries = field(default_factory=Canaries)

    @classmethod
    def open(cls, workdir: str | Path, store_url: str | None = None) -> World:
        root = Path(workdir)
        root.mkdir(parents=True, exist_ok=True)
        service_clock = ServiceClock(start=EPOCH)
        return cls(
            store=store_for(root, store_url),
            services=InProcessServices(clock=service_clock),
            clock=SharedTime(service_clock),
            store_url=store_url,
            root=root,
        )

    @property
    def workdir(self) -> Path:
        """The harness's own folder: worker folders, the journal of the real tier."""
        return self.root or self.store.workdir

    def begin_run(self, engine: EngineSpec) -> None:
        """Make this world one that no earlier run has touched: no service state, the clock at
        its start, no worker folders, and a store that holds nothing of any earlier run."""
        self.check_store()
        self.services.reset()
        self.clock.set(EPOCH)
        empty(self.workdir / "workers")  # its files; the folder stays (`run.folders`)
        if engine.reset is not None:
            engine.reset(self.store)
        elif self.runs:
            self._fresh_store()
        self.check_store(anew=True)
        self.runs += 1

    def check_store(self, *, anew: bool = False) -> None:
        """`DatabaseUnavailable` when the store's SQLite file was deleted or replaced since it
        was last seen: a new worker would open an empty store there and start over. `anew`:
        after a reset, which may delete and make the file again."""
        if self._file is None or self._file.url != self.store.url:
            self._file = StoreFile(self.store.url)
        if anew:
            self._file.forget()
        self._file.check()

    def _fresh_store(self) -> None:
        """A database and work folder for the next run alone, for an engine with no reset
        hook; the previous run's own goes. A database the user pinned (a SQLite file, a
        PostgreSQL schema) cannot be made afresh: such an engine needs a reset hook."""
        url = self.store_url
        if url is not None and (url.startswith("sqlite") or pins_schema(url)):
            return
        fresh = store_for(self.workdir / "stores" / str(self.runs), url, self.tenant)
        self.store.shared.close()
        self._first = self._first or self.store
        self._drop_own()
        self.store = self._own = fresh

    def _drop_own(self) -> None:
        own, self._own = self._own, None
        if own is None:
            return
        own.shared.close()
        drop_scratch(self.store_url, own.url)  # a schema this world made for one run
        shutil.rmtree(own.workdir, ignore_errors=True)

    @property
    def tenant(self) -> str:
        return self.store.tenant

    def close(self) -> None:
        try:
            self.canaries.close()
            self.store.shared.close()
            self._drop_own()
            self.store = self._first or self.store  # whose database its opener may drop
        finally:
            self.services.close()

    def __enter__(self) -> World:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
