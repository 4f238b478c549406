"""killpoint's pytest plugin: crash campaigns as fixtures and a marker, one report per session.

Registered through the `pytest11` entry point, so it loads in every pytest run of a project that
installs killpoint: at load it imports pytest and the standard library only, and the engine,
the store and the fake services are imported inside the fixtures and hooks that use them.

    @pytest.mark.killpoint(scenario=MY_SCENARIO, double=False)
    def test_checkout_survives_crashes(killpoint_result):
        assert killpoint_result.runs

The marker's arguments configure the `killpoint_campaign` fixture (as respx's marker configures
its mock); with a scenario named, the campaign runs before the test body and any violating run
fails the test with its checker, evidence and replay command. Campaign results of the whole
session, from every xdist worker, become one HTML report written by the controller alone; a
campaign a passing test ran with `fail_on_violation=False` to show a broken engine caught is
reported "caught as expected", apart, and does not turn the session red. Options come from the
command line, then the environment, then the ini file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from killpoint.harness.pytest_plugin._settings import (
    MARKER_ARGS as MARKER_ARGS,  # the marker's words
)
from killpoint.harness.pytest_plugin._settings import (
    MARKER_ORDER,
    WORKER_SEED,
    Campaigned,
    Settings,
    add_options,
    settings_of,
)

if TYPE_CHECKING:
    from killpoint.fake_services import InProcessServices
    from killpoint.harness.pytest_plugin._campaigns import (
        CampaignRunner,
        Databases,
        KillSwitchFactory,
    )
    from killpoint.harness.results import CampaignResult
    from killpoint.harness.run.world import World
    from killpoint.reference.store import Store

WORKER_RESULTS = "killpoint_results"  # key in xdist's workeroutput


@dataclass
class SessionState:
    settings: Settings
    ran: list[Campaigned] = field(default_factory=list)
    from_workers: list[tuple[str, str, bool, bool]] = field(default_factory=list)
    parts: list[Campaigned] = field(default_factory=list)  # the whole session's
    written: list[str] = field(default_factory=list)
    docker: str | None = None  # why Docker is unreachable; "" once it answered


STATE = pytest.StashKey[SessionState]()
RUNNER = pytest.StashKey["CampaignRunner"]()  # the test's campaigns, judged after its body


# -- options: generated from the options models (`_settings`) ------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"killpoint(*scenarios, {', '.join(f'{a}=' for a in MARKER_ORDER)}): run a crash "
        "campaign over the scenarios (catalogue names or your own Scenario objects) before the "
        "test; the test fails with the violations. See the killpoint_campaign fixture.",
    )
    state = SessionState(settings_of(config))
    config.stash[STATE] = state
    if state.settings.campaign.db == "docker" and not hasattr(config, "workerinput"):
        problem = _docker_problem(state)
        if problem:
            config.issue_config_time_warning(
                pytest.PytestConfigWarning(
                    f"--killpoint-db=docker but no Docker engine answers ({problem}); "
                    "tests that need the killpoint store will skip"
                ),
                stacklevel=2,
            )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker campaigns with the controller's seed."""
    node.workerinput[WORKER_SEED] = node.config.stash[STATE].settings.campaign.seed


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash[STATE]
    c, s = state.settings.campaign, state.settings.session
    lines = [
        f"killpoint: seed {c.seed}, tier {c.tier}, engine {c.engine or 'reference'}, "
        f"store {_store_label(state)}"
    ]
    if s.report or s.junit:
        lines.append("killpoint report: " + ", ".join(str(p) for p in (s.report, s.junit) if p))
    profile = config.getoption("hypothesis_profile", None) or os.environ.get("HYPOTHESIS_PROFILE")
    if profile:
        lines.append(f"killpoint hypothesis profile: {profile}")
    return lines


def _store_label(state: SessionState) -> str:
    db, source = state.settings.campaign.db, state.settings.sources.get("db", "")
    if db is None:
        return (
            "sqlite, a file per campaign in the test's tmp_path (no --killpoint-db, "
            "KILLPOINT_DATABASE_URL or killpoint_db)"
        )
    if db == "docker":
        problem = _docker_problem(state)
        if problem:
            return f"docker unreachable ({problem}): killpoint tests skip"
        return f"PostgreSQL in a testcontainers container (from {source})"
    hidden = re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", db)
    per = ", a fresh schema per campaign" if is_postgres(db) else ""
    return f"{hidden} (from {source}){per}"


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql", "postgres:"))


def _docker_problem(state: SessionState) -> str:
    """Why no Docker engine answers ("" when one does); asked once per process."""
    if state.docker is None:
        try:
            import docker

            docker.from_env(timeout=3).ping()
            state.docker = ""
        except Exception as exc:
            state.docker = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
    return state.docker


# -- the store and the world ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def _killpoint_docker_url(pytestconfig: pytest.Config) -> Iterator[str]:
    problem = _docker_problem(pytestconfig.stash[STATE])
    if problem:
        pytest.skip(f"--killpoint-db=docker: no Docker engine answers ({problem})")
    from testcontainers.postgres import PostgresContainer

    with PostgresContainer("postgres:16-alpine", driver="psycopg") as container:
        yield container.get_connection_url()


@pytest.fixture
def _killpoint_databases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Databases]:
    db = request.config.stash[STATE].settings.campaign.db
    base = request.getfixturevalue("_killpoint_docker_url") if db == "docker" else db
    from killpoint.harness.pytest_plugin._campaigns import Databases

    databases = Databases(base, tmp_path / "killpoint")
    (tmp_path / "killpoint").mkdir(exist_ok=True)
    yield databases
    databases.drop()


@pytest.fixture
def killpoint_store_url(_killpoint_databases: Databases) -> str:
    """A URL of this test's own store database, for code that opens its own `Store`."""
    return _killpoint_databases.allocate("store")[0]


@pytest.fixture
def killpoint_store(killpoint_store_url: str) -> Iterator[Store]:
    """The reference engine's `Store` on this test's own database (see `--killpoint-db`)."""
    from killpoint.reference.store import Store

    store = Store(killpoint_store_url)
    yield store
    store.close()


@pytest.fixture
def killpoint_services() -> Iterator[InProcessServices]:
    """The fake downstream services in this process; their journal is the ground truth."""
    from killpoint.fake_services import InProcessServices
    from killpoint.fake_services.clock import ServiceClock
    from killpoint.harness.run.world import EPOCH

    with InProcessServices(clock=ServiceClock(start=EPOCH)) as services:
        yield services


@pytest.fixture
def killpoint_world(
    killpoint_store_url: str, killpoint_services: InProcessServices, tmp_path: Path
) -> Iterator[World]:
    """A `World` (this test's store, the services, one shared clock) for
    `killpoint.harness.run.runner.run_schedule`."""
    from killpoint.harness.protocol import StoreHandle
    from killpoint.harness.run.databases import label
    from killpoint.harness.run.world import TENANT, SharedTime, World

    workdir = tmp_path / "killpoint" / "world"
    workdir.mkdir(parents=True, exist_ok=True)
    handle = StoreHandle(killpoint_store_url, workdir, TENANT, label(killpoint_store_url))
    world = World(
        store=handle, services=killpoint_services, clock=SharedTime(killpoint_services.clock)
    )
    yield world
    handle.shared.close()  # the services close with their own fixture


@pytest.fixture
def killpoint_killswitch(killpoint_world: World) -> KillSwitchFactory:
    """`killpoint_killswitch(schedule, worker=0)`: a `KillSwitch` (the boundary hook of one
    worker) on the world's clock; `.hits` holds every hit of every switch it built."""
    from killpoint.harness.pytest_plugin._campaigns import KillSwitchFactory

    return KillSwitchFactory(killpoint_world)


# -- campaigns -----------------------------------------------------------------------------------


@pytest.fixture
def killpoint_campaign(
    request: pytest.FixtureRequest, _killpoint_databases: Databases, tmp_path: Path
) -> CampaignRunner:
    """`killpoint_campaign(*scenarios, **options)` runs a crash campaign and returns its
    `CampaignResult`; the test's `killpoint` marker gives the defaults (see `CampaignRunner`)."""
    marker = request.node.get_closest_marker("killpoint")
    args, kwargs = (marker.args, dict(marker.kwargs)) if marker else ((), {})
    from killpoint.harness.pytest_plugin._campaigns import CampaignRunner

    state = request.config.stash[STATE]
    runner = CampaignRunner(
        request,
        _killpoint_databases,
        tmp_path / "killpoint",
        args,
        kwargs,
        state.settings,
        lambda nodeid, result, enforced: state.ran.append(Campaigned(nodeid, result, enforced)),
    )
    request.node.stash[RUNNER] = runner
    return runner


@pytest.fixture
def killpoint_result(killpoint_campaign: CampaignRunner) -> CampaignResult:
    """The result of the campaign the test's `killpoint` marker describes (run before the test)."""
    return killpoint_campaign()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test whose marker names a scenario runs its campaign even if it asks for no fixture
    (one that asks for `killpoint_campaign` runs what it wants itself)."""
    for item in items:
        marker = item.get_closest_marker("killpoint")
        fixturenames: list[str] | None = getattr(item, "fixturenames", None)
        if marker is None or fixturenames is None:
            continue
        named = marker.args or marker.kwargs.get("scenario")
        if named and "killpoint_campaign" not in fixturenames:
            fixturenames.append("killpoint_result")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    try:
        outcome = yield  # a failing test body keeps its own failure
    except BaseException:
        for part in item.config.stash[STATE].ran:
            part.test_failed = part.test_failed or part.test == item.nodeid
        raise
    runner = item.stash.get(RUNNER, None)
    message = runner.violations_message() if runner is not None else None
    if message:
        pytest.fail(message, pytrace=False)
    return outcome


# -- the session's report, written once ----------------------------------------------------------


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: collect what a worker campaigned."""
    output: dict[str, Any] = getattr(node, "workeroutput", None) or {}
    node.config.stash[STATE].from_workers.extend(output.get(WORKER_RESULTS, []))


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None:
        return
    workeroutput: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller writes the files
        workeroutput[WORKER_RESULTS] = [
            (p.test, p.result.model_dump_json(), p.enforced, p.test_failed) for p in state.ran
        ]
        return
    if not (state.ran or state.from_workers):
        return
    from killpoint.harness.pytest_plugin._campaigns import parse_result, write_reports

    received = [Campaigned(n, parse_result(t), *flags) for n, t, *flags in state.from_workers]
    state.parts = sorted(state.ran + received, key=lambda part: part.test)
    s = state.settings.session
    if s.report or s.junit:
        state.written = write_reports(state.parts, s.report, s.junit)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or hasattr(config, "workerinput"):
        return
    if not state.parts:
        return
    terminalreporter.section("killpoint")
    judged = [p.result for p in state.parts if not p.expected]
    if judged:
        runs = sum(len(r.runs) for r in judged)
        bad = sum(len(r.violations) for r in judged)
        n = len(judged)
        terminalreporter.write_line(
            f"{n} campaign{'s' if n != 1 else ''}, {runs} runs, {bad} violating"
        )
    expected = [p for p in state.parts if p.expected]
    if expected:
        terminalreporter.write_line(
            f"caught as expected (fail_on_violation=False, the test passed; not counted above): "
            f"{len(expected)} campaign{'s' if len(expected) != 1 else ''}"
        )
    for p in expected:
        r = p.result
        terminalreporter.write_line(
            f"  {p.test}: engine {r.engine}, {len(r.violations)} of {len(r.runs)} runs violating"
        )
    for line in state.written:
        terminalreporter.write_line(line)
