"""The in-process world a campaign runs in: one store, one set of services, one clock.

Shared by every run of a campaign for speed (creating a database per run would cost more than
the run). Runs stay independent because each uses its own workflow id and business keys, and the
services' journal and fault counters are reset before each run. A worker's death drops the
worker's objects; the store connection pool is shared because no boundary is ever inside a
transaction, so a dead worker cannot leave one open.
"""

from __future__ import annotations

import os
import secrets
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import httpx
from sqlalchemy import make_url

from killpoint.fake_services import FaultPlan, InProcessServices, Journal, ServiceClock
from killpoint.harness.contract.records import Versions
from killpoint.harness.engine._backends import resolve_url
from killpoint.harness.engine.integrity import DEFAULT_KEY_ENV, SecretRef
from killpoint.harness.engine.store import Store

EPOCH = 1_800_000_000.0
BASE_VERSIONS = Versions(
    plan="plan@1", prompt="prompt@1", model_contract="contract@1", tool_schema="tools@1"
)


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


def campaign_store(url: str | None, root: Path) -> Store:
    """The store a campaign (or a replay) owns alone.

    Runs name workflows after their scenario and schedule (`order_saga:clean`), so two
    campaigns must never share tables: SQLite gets a file in the campaign's folder, PostgreSQL
    a schema of its own (`kp_…`, kept afterwards for `killpoint inspect`) unless the URL
    already pins one with a search_path. It is a scratch store: it must survive the deaths a
    campaign injects, not a power loss.
    """
    if url is None:
        return Store(f"sqlite:///{root / 'store.sqlite'}", scratch=True)
    resolved = resolve_url(url)
    if make_url(resolved).get_backend_name() == "postgresql" and not pins_schema(resolved):
        return Store(resolved, schema=f"kp_{uuid.uuid4().hex[:12]}", scratch=True)
    return Store(resolved, scratch=True)


def pins_schema(url: str) -> bool:
    """Whether a database URL names the schema itself (`options=-csearch_path=…`)."""
    return "search_path" in str(make_url(url).query.get("options", ""))


def ensure_key(env: str = DEFAULT_KEY_ENV) -> SecretRef:
    """The checkpoint key's reference; a random key for this process when none is set."""
    if not os.environ.get(env):
        os.environ[env] = secrets.token_hex(32)
    return SecretRef(env)


@dataclass
class World:
    workdir: Path
    store: Store
    services: Services
    clock: WorldClock
    secret: SecretRef
    tenant: str = "tenant-a"
    lease_ttl: float = 30.0
    versions: Versions = BASE_VERSIONS
    runs: int = field(default=0)

    @classmethod
    def open(cls, workdir: str | Path, store_url: str | None = None) -> World:
        root = Path(workdir)
        root.mkdir(parents=True, exist_ok=True)
        service_clock = ServiceClock(start=EPOCH)
        return cls(
            workdir=root,
            store=campaign_store(store_url, root),
            services=InProcessServices(clock=service_clock),
            clock=SharedTime(service_clock),
            secret=ensure_key(),
        )

    def close(self) -> None:
        self.services.close()
        self.store.close()
