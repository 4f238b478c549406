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
session, from every xdist worker, become one HTML report written by the controller alone.
Options come from the command line, then the environment, then the ini file.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from killpoint.fake_services import InProcessServices
    from killpoint.harness._pytest_campaigns import CampaignRunner, Databases, KillSwitchFactory
    from killpoint.harness.engine.store import Store
    from killpoint.harness.results import CampaignResult
    from killpoint.harness.world import World

TIERS = ("inprocess", "real")
MARKER_ARGS = frozenset(
    {
        "scenario",
        "engine",
        "tier",
        "double",
        "double_limit",
        "network",
        "named",
        "interleave",
        "shard",
        "fail_on_violation",
    }
)
WORKER_RESULTS = "killpoint_results"  # key in xdist's workeroutput
WORKER_SEED = "killpoint_seed"  # key in xdist's workerinput
SEED_CACHE = "killpoint/seed"

# (option, ini name, environment variable, help)
SETTINGS: tuple[tuple[str, str, str | None, str], ...] = (
    (
        "db",
        "killpoint_db",
        "KILLPOINT_DATABASE_URL",
        "database URL of the store under test (PostgreSQL gets a fresh schema per campaign); "
        "'docker' for a testcontainers PostgreSQL; default: a SQLite file per test in tmp_path",
    ),
    ("engine", "killpoint_engine", "KILLPOINT_ENGINE", "engine under test (default: reference)"),
    ("tier", "killpoint_tier", "KILLPOINT_TIER", "inprocess (default) or real (SIGKILL)"),
    ("report", "killpoint_report", "KILLPOINT_REPORT", "write the session's HTML report"),
    ("junit", "killpoint_junit", "KILLPOINT_JUNIT", "write JUnit XML, one case per boundary"),
    (
        "seed",
        "killpoint_seed",
        "KILLPOINT_SEED",
        "seed of the sampled paired crashes: N, 'random' or 'last' (default 0)",
    ),
    (
        "double_limit",
        "killpoint_double_limit",
        "KILLPOINT_DOUBLE_LIMIT",
        "paired crashes per scenario before sampling (default 150)",
    ),
    (
        "replay",
        "killpoint_replay",
        None,
        "re-run exactly this fault schedule (a JSON file) in "
        "the killpoint tests whose scenario it belongs to, instead of their campaigns",
    ),
)
SOURCES = {name: (ini, env) for name, ini, env, _ in SETTINGS} | {
    "double": ("killpoint_double", "KILLPOINT_DOUBLE")
}
METAVARS = {
    "db": "URL",
    "engine": "MODULE:FACTORY",
    "tier": "TIER",
    "seed": "N",
    "double_limit": "N",
    "report": "PATH",
    "junit": "PATH",
    "replay": "FILE",
}


@dataclass(frozen=True)
class Settings:
    db: str | None
    db_source: str
    engine: str
    tier: str
    seed: int
    double: bool
    double_limit: int
    report: Path | None
    junit: Path | None
    replay: Path | None


@dataclass
class SessionState:
    settings: Settings
    ran: list[tuple[str, CampaignResult]] = field(default_factory=list)
    from_workers: list[tuple[str, str]] = field(default_factory=list)
    parts: list[tuple[str, CampaignResult]] = field(default_factory=list)  # the whole session's
    written: list[str] = field(default_factory=list)
    docker: str | None = None  # why Docker is unreachable; "" once it answered


STATE = pytest.StashKey[SessionState]()
RUNNER = pytest.StashKey["CampaignRunner"]()  # the test's campaigns, judged after its body


# -- options ------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("killpoint", "killpoint crash campaigns")
    for name, ini, env, text in SETTINGS:
        flag = "--killpoint-" + name.replace("_", "-")
        group.addoption(
            flag,
            dest=f"killpoint_{name}",
            metavar=METAVARS[name],
            default=None,
            help=text + (f" [env {env}, ini {ini}]" if env else ""),
        )
        parser.addini(ini, text, default="")
    group.addoption(
        "--killpoint-double",
        dest="killpoint_double",
        action="store_true",
        default=None,
        help="also crash each recovery (default) [env KILLPOINT_DOUBLE, ini killpoint_double]",
    )
    group.addoption(
        "--killpoint-no-double",
        dest="killpoint_double",
        action="store_false",
        help="crash each boundary once only",
    )
    parser.addini("killpoint_double", "also crash each recovery (true/false)", default="")


def _setting(config: pytest.Config, name: str) -> tuple[str | None, str]:
    """The value of one setting and where it came from: option, environment, ini."""
    ini, env = SOURCES[name]
    given = config.getoption(f"killpoint_{name}")
    if given is not None:
        return str(given), "--killpoint-" + name.replace("_", "-")
    if env and os.environ.get(env):
        return os.environ[env], env
    value = str(config.getini(ini) or "")
    return (value, f"ini {ini}") if value else (None, "")


def _settings(config: pytest.Config) -> Settings:
    db, db_source = _setting(config, "db")
    tier = _setting(config, "tier")[0] or "inprocess"
    if tier not in TIERS:
        raise pytest.UsageError(f"--killpoint-tier wants one of {', '.join(TIERS)}, got {tier!r}")
    double = _setting(config, "double")[0]
    limit = _setting(config, "double_limit")[0] or "150"
    report, junit, replay = (_setting(config, n)[0] for n in ("report", "junit", "replay"))
    here = Path(config.invocation_params.dir)
    try:
        return Settings(
            db=db,
            db_source=db_source,
            engine=_setting(config, "engine")[0] or "reference",
            tier=tier,
            seed=_seed(config),
            double=True if double is None else double.lower() not in ("0", "false", "no", "off"),
            double_limit=int(limit),
            report=here / report if report else None,
            junit=here / junit if junit else None,
            replay=here / replay if replay else None,
        )
    except ValueError as exc:
        raise pytest.UsageError(f"killpoint: {exc}") from None


def _seed(config: pytest.Config) -> int:
    """The campaign seed; workers take the controller's, so 'random' is one seed per session."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and WORKER_SEED in workerinput:
        return int(workerinput[WORKER_SEED])
    text = _setting(config, "seed")[0] or "0"
    cache = getattr(config, "cache", None)
    if text == "last":
        seed = int(cache.get(SEED_CACHE, 0)) if cache is not None else 0
    elif text == "random":
        seed = random.SystemRandom().randrange(2**31)
    else:
        seed = int(text)
    if cache is not None:
        cache.set(SEED_CACHE, seed)
    return seed


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "killpoint(*scenarios, scenario=, engine=, tier=, double=, double_limit=, network=, "
        "named=, interleave=, shard=, fail_on_violation=): run a crash campaign over the "
        "scenarios (catalogue names or your own Scenario objects) before the test; the test "
        "fails with the violations. See the killpoint_campaign fixture.",
    )
    state = SessionState(_settings(config))
    config.stash[STATE] = state
    if state.settings.db == "docker" and not hasattr(config, "workerinput"):
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
    node.workerinput[WORKER_SEED] = node.config.stash[STATE].settings.seed


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash[STATE]
    s = state.settings
    lines = [
        f"killpoint: seed {s.seed}, tier {s.tier}, engine {s.engine}, store {_store_label(state)}"
    ]
    if s.report or s.junit:
        lines.append("killpoint report: " + ", ".join(str(p) for p in (s.report, s.junit) if p))
    profile = config.getoption("hypothesis_profile", None) or os.environ.get("HYPOTHESIS_PROFILE")
    if profile:
        lines.append(f"killpoint hypothesis profile: {profile}")
    return lines


def _store_label(state: SessionState) -> str:
    s = state.settings
    if s.db is None:
        return (
            "sqlite, a file per campaign in the test's tmp_path (no --killpoint-db, "
            "KILLPOINT_DATABASE_URL or killpoint_db)"
        )
    if s.db == "docker":
        problem = _docker_problem(state)
        if problem:
            return f"docker unreachable ({problem}): killpoint tests skip"
        return "PostgreSQL in a testcontainers container (from " + s.db_source + ")"
    hidden = re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", s.db)
    per = ", a fresh schema per campaign" if is_postgres(s.db) else ""
    return f"{hidden} (from {s.db_source}){per}"


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
    db = request.config.stash[STATE].settings.db
    base = request.getfixturevalue("_killpoint_docker_url") if db == "docker" else db
    from killpoint.harness._pytest_campaigns import Databases

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
    from killpoint.harness.engine.store import Store

    store = Store(killpoint_store_url)
    yield store
    store.close()


@pytest.fixture
def killpoint_services() -> Iterator[InProcessServices]:
    """The fake downstream services in this process; their journal is the ground truth."""
    from killpoint.fake_services import InProcessServices
    from killpoint.fake_services.clock import ServiceClock
    from killpoint.harness.world import EPOCH

    with InProcessServices(clock=ServiceClock(start=EPOCH)) as services:
        yield services


@pytest.fixture
def killpoint_world(
    killpoint_store_url: str, killpoint_services: InProcessServices, tmp_path: Path
) -> Iterator[World]:
    """A `World` (this test's store, the services, one shared clock) for
    `killpoint.harness.runner.run_schedule`."""
    from killpoint.harness.databases import label
    from killpoint.harness.protocol import StoreHandle
    from killpoint.harness.world import TENANT, SharedTime, World

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
    from killpoint.harness._pytest_campaigns import KillSwitchFactory

    return KillSwitchFactory(killpoint_world)


# -- campaigns -----------------------------------------------------------------------------------


@pytest.fixture
def killpoint_campaign(
    request: pytest.FixtureRequest, _killpoint_databases: Databases, tmp_path: Path
) -> CampaignRunner:
    marker = request.node.get_closest_marker("killpoint")
    args, kwargs = (marker.args, dict(marker.kwargs)) if marker else ((), {})
    unknown = set(kwargs) - MARKER_ARGS
    if unknown:
        pytest.fail(
            f"@pytest.mark.killpoint got unknown arguments {sorted(unknown)}; "
            f"it takes {sorted(MARKER_ARGS)}",
            pytrace=False,
        )
    from killpoint.harness._pytest_campaigns import CampaignRunner

    state = request.config.stash[STATE]
    runner = CampaignRunner(
        request,
        _killpoint_databases,
        tmp_path / "killpoint",
        args,
        kwargs,
        state.settings,
        lambda nodeid, result: state.ran.append((nodeid, result)),
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
    outcome = yield  # a failing test body keeps its own failure
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
        workeroutput[WORKER_RESULTS] = [(n, r.model_dump_json()) for n, r in state.ran]
        return
    if not (state.ran or state.from_workers):
        return
    from killpoint.harness._pytest_campaigns import parse_result, write_reports

    received = [(nodeid, parse_result(text)) for nodeid, text in state.from_workers]
    state.parts = sorted(state.ran + received, key=lambda part: part[0])
    s = state.settings
    if s.report or s.junit:
        state.written = write_reports(state.parts, s.report, s.junit)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or hasattr(config, "workerinput"):
        return
    if not state.parts:
        return
    terminalreporter.section("killpoint")
    runs = sum(len(r.runs) for _, r in state.parts)
    bad = sum(len(r.violations) for _, r in state.parts)
    n = len(state.parts)
    terminalreporter.write_line(
        f"{n} campaign{'s' if n != 1 else ''}, {runs} runs, {bad} violating"
    )
    for line in state.written:
        terminalreporter.write_line(line)
