"""Fixtures shared by every test: a store and a world on each backend, the fake services, a
fake clock, a checkpoint key.

The `store` and `world` fixtures are parametrized over SQLite (a file in tmp_path) and
PostgreSQL (a fresh schema per test at `$KILLPOINT_TEST_POSTGRES_URL`, dropped with CASCADE
afterwards). PostgreSQL is skipped, with the reason, only when that variable is unset outside
CI; once it is set (or `CI` is), an unreachable server fails the test instead of quietly
shrinking the suite.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, make_url, text

from killpoint.contract.boundaries import BoundaryHook
from killpoint.contract.clock import FakeClock
from killpoint.fake_services import InProcessServices
from killpoint.harness.run.databases import dropped
from killpoint.harness.run.world import World
from killpoint.reference.dispatcher import Engine
from killpoint.reference.store import Store
from killpoint.scenarios.adapters import adapters_for
from tests.support.fixtures import (
    TEST_KEY,
    NewWorker,
    OpenStore,
    check_reachable,
    server_url,
)
from tests.support.flows import make_engine
from tests.support.loader_inputs import File


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def postgres_url() -> str:
    """The test server's URL (the caller makes its own schema, or database, in it)."""
    url = server_url()
    check_reachable(url)
    return url


@pytest.fixture
def database(backend: str, tmp_path: Path) -> tuple[str, str | None]:
    """(URL, schema) of this test's own database: a SQLite file, or a fresh PostgreSQL schema."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'killpoint.sqlite'}", None
    url = server_url()
    check_reachable(url)
    return url, f"kp_{uuid.uuid4().hex[:16]}"


@pytest.fixture
def store_url(database: tuple[str, str | None], store: Store) -> str:
    """A URL another process (the CLI) can open the test's store by, schema included."""
    url, schema = database
    if schema is None:
        return url
    with_path = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
    return with_path.render_as_string(hide_password=False)


@pytest.fixture
def open_store(database: tuple[str, str | None]) -> Iterator[OpenStore]:
    """Open (again) a store on this test's database: a restarted worker gets its own Store."""
    opened: list[Store] = []
    url, schema = database

    def opener() -> Store:
        store = Store(url, schema=schema)
        opened.append(store)
        return store

    yield opener
    for store in opened:
        store.close()
    if schema is not None:
        engine = create_engine(url)
        try:
            with engine.begin() as conn:
                conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        finally:
            engine.dispose()


@pytest.fixture
def store(open_store: OpenStore) -> Store:
    return open_store()


@pytest.fixture
def world(backend: str, tmp_path: Path, checkpoint_key: bytes) -> Iterator[World]:
    """A campaign's world, as `World.open` makes one: its own store on this test's backend (a
    SQLite file in its folder, or a fresh PostgreSQL schema, dropped afterwards), in-process
    services and one clock for both."""
    url = None
    if backend == "postgres":
        url = server_url()
        check_reachable(url)
    with World.open(tmp_path / "world", url) as opened, dropped(url, opened.store.url):
        yield opened


@pytest.fixture
def services() -> Iterator[InProcessServices]:
    """Fresh in-process fake services with an in-memory journal."""
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
def checkpoint_key(monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The HMAC key, held only in the environment as the engine's secret reference expects."""
    monkeypatch.setenv("KILLPOINT_CHECKPOINT_KEY", TEST_KEY)
    return TEST_KEY.encode()


# -- Hypothesis profiles (stateful exploration: scenarios/stateful.py) -------------------------
# `ci` is bounded and derandomized so CI is stable; `thorough` is for hunting on demand. Pick one
# with HYPOTHESIS_PROFILE=thorough, or `pytest --hypothesis-profile=thorough` (Hypothesis's own
# pytest plugin loads it after this file). A failure prints its `@reproduce_failure` blob.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci",
    max_examples=25,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=400,
    stateful_step_count=25,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# -- reference-engine workers over the test's store ------------------------------------------


@pytest.fixture
def engine(store: Store, clock: FakeClock, tmp_path: Path, checkpoint_key: bytes) -> Engine:
    """A worker with only the pure workflows (no services needed)."""
    return make_engine(store, clock, tmp_path)


@pytest.fixture
def new_worker(
    open_store: OpenStore,
    clock: FakeClock,
    tmp_path: Path,
    http: httpx.Client,
    checkpoint_key: bytes,
) -> NewWorker:
    """Start a worker as a restarted process would: its own Store, Engine and adapters."""

    def start(hook: BoundaryHook | None = None, **kwargs: Any) -> Engine:
        return make_engine(open_store(), clock, tmp_path, adapters_for(http), hook=hook, **kwargs)

    return start


@pytest.fixture
def file(tmp_path: Path) -> File:
    """The test's one input file, rewritten with each example's bytes."""

    def holding(data: bytes) -> Path:
        path = tmp_path / "input.json"
        path.write_bytes(data)
        return path

    return holding


# -- the number of inputs the fuzz tests tried (tests/support/fuzz.py) ---------------------------
from tests.support import fuzz  # noqa: E402


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Put the inputs the test just tried on its report (xdist carries it to the controller)."""
    report = yield
    if call.when == "call":
        count = fuzz.take()
        if count:
            report.user_properties.append((fuzz.PROPERTY, count))
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line at the end of the session: the fuzz inputs tried, in all and per test file."""
    by_file: dict[str, int] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, value in getattr(report, "user_properties", ()):
                if name == fuzz.PROPERTY:
                    path = report.nodeid.partition("::")[0]
                    by_file[path] = by_file.get(path, 0) + int(value)
    if by_file:
        parts = ", ".join(f"{p.rpartition('/')[2]} {n}" for p, n in sorted(by_file.items()))
        terminalreporter.write_line(
            f"fuzzed loaders: {sum(by_file.values())} inputs tried ({parts})"
        )
