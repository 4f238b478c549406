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
import time
import uuid
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fake_services import InProcessServices
    from harness.killswitch import Hit, KillSwitch
    from harness.results import CampaignResult, RunResult
    from harness.runner import EngineSpec
    from harness.schedule import FaultSchedule
    from harness.store import Store
    from harness.world import World
    from scenarios.base import Scenario

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
SHOWN_VIOLATIONS = 10
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
RUNNER = pytest.StashKey["CampaignRunner"]()


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
    per = ", a fresh schema per campaign" if _is_postgres(s.db) else ""
    return f"{hidden} (from {s.db_source}){per}"


def _is_postgres(url: str) -> bool:
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


class Databases:
    """Fresh databases for one test: SQLite files in tmp_path, or PostgreSQL schemas dropped
    afterwards (so campaigns of parallel tests on one shared server never meet)."""

    def __init__(self, base: str | None, tmp_path: Path) -> None:
        self.base, self.tmp_path = base, tmp_path
        self.schemas: list[str] = []

    def allocate(self, name: str) -> tuple[str, str | None]:
        """(URL another process can open it by, schema or None)."""
        if self.base is None:
            return f"sqlite:///{self.tmp_path / name}.sqlite", None
        if not _is_postgres(self.base):
            return self.base, None
        from sqlalchemy import make_url

        from harness.store import Store

        schema = f"kp_{uuid.uuid4().hex[:16]}"
        Store(self.base, schema=schema).close()
        self.schemas.append(schema)
        url = make_url(self.base).update_query_dict({"options": f"-csearch_path={schema}"})
        return url.render_as_string(hide_password=False), schema

    def drop(self) -> None:
        if not self.schemas or self.base is None:
            return
        from sqlalchemy import create_engine, text

        engine = create_engine(self.base)
        try:
            with engine.begin() as conn:
                for schema in self.schemas:
                    conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        finally:
            engine.dispose()


@pytest.fixture
def _killpoint_databases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Databases]:
    db = request.config.stash[STATE].settings.db
    base = request.getfixturevalue("_killpoint_docker_url") if db == "docker" else db
    databases = Databases(base, tmp_path / "killpoint")
    (tmp_path / "killpoint").mkdir(exist_ok=True)
    yield databases
    databases.drop()


@pytest.fixture
def killpoint_store_url(_killpoint_databases: Databases) -> str:
    """A URL of this test's own store database, for code that opens its own `Store`."""
    return _killpoint_databases.allocate("store")[0]


@pytest.fixture
def killpoint_store(_killpoint_databases: Databases) -> Iterator[Store]:
    """A `harness.Store` on this test's own database (see `--killpoint-db`)."""
    from harness.store import Store

    store = Store(_killpoint_databases.allocate("store")[0])
    yield store
    store.close()


@pytest.fixture
def killpoint_services() -> Iterator[InProcessServices]:
    """The fake downstream services in this process; their journal is the ground truth."""
    from fake_services import InProcessServices
    from fake_services.clock import ServiceClock
    from harness.world import EPOCH

    with InProcessServices(clock=ServiceClock(start=EPOCH)) as services:
        yield services


@pytest.fixture
def killpoint_world(
    killpoint_store: Store, killpoint_services: InProcessServices, tmp_path: Path
) -> World:
    """A `World` (store, services, one shared clock) for `harness.runner.run_schedule`."""
    from harness.world import SharedTime, World, ensure_key

    workdir = tmp_path / "killpoint" / "world"
    workdir.mkdir(parents=True, exist_ok=True)
    return World(
        workdir=workdir,
        store=killpoint_store,
        services=killpoint_services,
        clock=SharedTime(killpoint_services.clock),
        secret=ensure_key(),
    )


class KillSwitchFactory:
    """`killpoint_killswitch(schedule, worker=0)`: the boundary hook of one worker; every hit
    of every switch it built is in `.hits`."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.hits: list[Hit] = []

    def __call__(self, schedule: FaultSchedule, worker: int = 0) -> KillSwitch:
        from harness.killswitch import KillSwitch

        clock = self.world.clock
        return KillSwitch(worker, schedule, clock, self.hits.append, advance=clock.advance)


@pytest.fixture
def killpoint_killswitch(killpoint_world: World) -> KillSwitchFactory:
    return KillSwitchFactory(killpoint_world)


# -- campaigns -----------------------------------------------------------------------------------


class CampaignRunner:
    """The `killpoint_campaign` fixture: `killpoint_campaign(*scenarios, **options)` runs a
    crash campaign and returns its `CampaignResult`.

    Scenarios are catalogue names or `Scenario` objects (a team's own workflow, adapters and
    expected effects). Options are the marker's: engine ("module:factory", an `EngineSpec` or
    a factory), tier, double, double_limit, network, named, interleave, shard=(i, n) and
    fail_on_violation. A call's arguments beat the marker's, which beat the command line's.
    """

    def __init__(
        self,
        request: pytest.FixtureRequest,
        databases: Databases,
        workdir: Path,
        marker_args: Sequence[Any],
        marker_kwargs: dict[str, Any],
    ) -> None:
        self.request, self.databases, self.workdir = request, databases, workdir
        self.marker_args, self.marker_kwargs = tuple(marker_args), marker_kwargs
        self.state = request.config.stash[STATE]
        self.runs: list[tuple[CampaignResult, bool, str | None]] = []  # result, enforce, engine

    @property
    def results(self) -> list[CampaignResult]:
        return [r for r, _, _ in self.runs]

    @property
    def result(self) -> CampaignResult | None:
        return self.runs[-1][0] if self.runs else None

    def __call__(self, *scenarios: str | Scenario, **options: Any) -> CampaignResult:
        unknown = set(options) - MARKER_ARGS
        if unknown:
            raise TypeError(f"killpoint_campaign got unknown options {sorted(unknown)}")
        opts = {**self.marker_kwargs, **options}
        chosen = _scenarios(scenarios or (opts.get("scenario") or self.marker_args))
        if not chosen:
            raise pytest.UsageError(
                "killpoint_campaign needs a scenario: @pytest.mark.killpoint(scenario=...) or "
                "killpoint_campaign(scenario)"
            )
        s = self.state.settings
        engine_ref = opts.get("engine", s.engine)
        from harness.campaign import Campaign, CampaignConfig

        workdir = self.workdir / f"campaign-{len(self.runs) + 1}"
        url, _ = self.databases.allocate(f"campaign-{len(self.runs) + 1}")
        config = CampaignConfig(
            scenarios=chosen,
            workdir=workdir,
            engine=_engine(engine_ref),
            tier=opts.get("tier", s.tier),
            store_url=url,
            double=bool(opts.get("double", s.double)),
            double_limit=int(opts.get("double_limit", s.double_limit)),
            interleave=bool(opts.get("interleave", False)),
            network=bool(opts.get("network", True)),
            named=bool(opts.get("named", True)),
            seed=s.seed,
            shard=opts.get("shard"),
        )
        from harness.world import ensure_key

        ensure_key()
        result = self._replay(config) if s.replay else _run(Campaign(config))
        self.runs.append(
            (
                result,
                bool(opts.get("fail_on_violation", True)),
                engine_ref if isinstance(engine_ref, str) else None,
            )
        )
        self.state.ran.append((self.request.node.nodeid, result))
        return result

    def _replay(self, config: Any) -> CampaignResult:
        """Run the `--killpoint-replay` schedule alone, judged as the campaign judges it."""
        from datetime import UTC, datetime

        from harness.campaign import Campaign
        from harness.results import CampaignResult, ScenarioCoverage
        from harness.schedule import load_schedule
        from scenarios.cases import CASES

        assert self.state.settings.replay is not None
        schedule = load_schedule(self.state.settings.replay)
        scenario = next((c for c in config.scenarios if c.name == schedule.scenario), None)
        if scenario is None:
            names = ", ".join(c.name for c in config.scenarios)
            pytest.skip(
                f"--killpoint-replay is a schedule of {schedule.scenario!r}; "
                f"this test campaigns over {names}"
            )
        config.tier = schedule.tier
        case = next(
            (
                c
                for c in CASES
                if c.scenario == scenario.name and c.schedule.run_id == schedule.run_id
            ),
            None,
        )
        campaign, started = Campaign(config), time.perf_counter()
        try:
            run, _ = campaign.execute(scenario, schedule, "replay", case.expect if case else None)
        finally:
            campaign.close()
        coverage = ScenarioCoverage(
            scenario=scenario.name,
            boundaries_discovered=[],
            boundaries_crashed=run.crashed_at,
            runs=1,
            violations=int(run.valid is False),
        )
        return CampaignResult(
            engine=config.engine.name,
            tier=schedule.tier,
            backend=campaign.world.store.url_for_humans,
            seed=config.seed,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            duration_s=time.perf_counter() - started,
            scenarios=[coverage],
            runs=[run],
        )

    def violations_message(self) -> str | None:
        """What failed, as a reader wants it: checker, evidence, and how to replay each run."""
        lines: list[str] = []
        for result, enforce, engine_ref in self.runs:
            bad = result.violations
            if not enforce or not bad:
                continue
            names = ", ".join(c.scenario for c in result.scenarios)
            lines.append(
                f"killpoint: {len(bad)} of {len(result.runs)} runs of {names} violate the oracle "
                f"(engine {result.engine}, tier {result.tier}, seed {result.seed})"
            )
            for run in bad[:SHOWN_VIOLATIONS]:
                lines.extend(self._describe(run, engine_ref))
            if len(bad) > SHOWN_VIOLATIONS:
                lines.append(f"... and {len(bad) - SHOWN_VIOLATIONS} more (see the report)")
        return "\n".join(lines) or None

    def _keep(self, schedule_file: Path) -> str:
        """A copy of a failing schedule that outlives tmp_path (pytest's cache folder, as
        --lf keeps its list), named relative to where pytest was started when it can be."""
        config = self.request.config
        cache = getattr(config, "cache", None)
        if cache is None:
            return str(schedule_file)
        test = re.sub(r"[^\w.-]+", "_", self.request.node.nodeid).strip("_")
        kept = cache.mkdir("killpoint-schedules") / test / schedule_file.name
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(schedule_file.read_bytes())
        try:
            return str(kept.relative_to(config.invocation_params.dir))
        except ValueError:
            return str(kept)

    def _describe(self, run: RunResult, engine_ref: str | None) -> list[str]:
        lines = [f"✗ {run.scenario} {run.label} → {run.final_status}"]
        for verdict in run.verdicts:
            if verdict.valid is False:
                lines.append(f"    [{verdict.checker}] {verdict.summary}")
                lines.extend(f"        {e}" for e in verdict.evidence[:3])
        if run.schedule_file:
            kept = self._keep(Path(run.schedule_file))
            lines.append(
                f"    replay: pytest '{self.request.node.nodeid}' --killpoint-replay={kept}"
            )
            import scenarios

            if run.scenario in scenarios.CATALOGUE and engine_ref is not None:
                engine = "" if engine_ref == "reference" else f" --engine {engine_ref}"
                lines.append(f"    replay: killpoint replay {kept}{engine}")
        return lines


def _run(campaign: Any) -> CampaignResult:
    try:
        result: CampaignResult = campaign.run()
    finally:
        campaign.close()
    if campaign.config.tier != result.tier:  # the campaign reports the tier it ran in
        result = result.model_copy(update={"tier": campaign.config.tier})
    return result


def _scenarios(given: Any) -> list[Scenario]:
    import scenarios
    from scenarios.base import Scenario

    items = [given] if isinstance(given, str | Scenario) else list(given or ())
    chosen: list[Scenario] = []
    for item in items:
        if isinstance(item, Scenario):
            chosen.append(item)
        elif isinstance(item, str):
            chosen.append(scenarios.get(item))
        else:
            raise TypeError(f"a killpoint scenario is a name or a Scenario, not {item!r}")
    return chosen


def _engine(ref: Any) -> EngineSpec:
    from harness.engines import NoHistory, load_engine
    from harness.runner import EngineSpec

    if isinstance(ref, EngineSpec):
        return ref
    if isinstance(ref, str) or ref is None:
        return load_engine(ref)
    if callable(ref):
        reader = getattr(ref, "reader", None) or (lambda world: NoHistory())
        name = getattr(ref, "__qualname__", repr(ref))
        return EngineSpec(
            name=name, factory=ref, reader=reader, tamper=getattr(ref, "tamper", None)
        )
    raise TypeError(f"a killpoint engine is 'module:factory', an EngineSpec or a factory: {ref!r}")


@pytest.fixture
def killpoint_campaign(
    request: pytest.FixtureRequest, _killpoint_databases: Databases, tmp_path: Path
) -> CampaignRunner:
    marker = request.node.get_closest_marker("killpoint")
    args, kwargs = (marker.args, dict(marker.kwargs)) if marker else ((), {})
    unknown = set(kwargs) - MARKER_ARGS
    if unknown:
        raise pytest.UsageError(
            f"@pytest.mark.killpoint got unknown arguments {sorted(unknown)}; "
            f"it takes {sorted(MARKER_ARGS)}"
        )
    runner = CampaignRunner(request, _killpoint_databases, tmp_path / "killpoint", args, kwargs)
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
    from harness.results import CampaignResult

    received = [(n, CampaignResult.model_validate_json(j)) for n, j in state.from_workers]
    state.parts = sorted(state.ran + received, key=lambda part: part[0])
    s = state.settings
    for i, result in enumerate(_reports(state.parts) if s.report or s.junit else ()):
        if s.report:
            from reports import write_html

            state.written.append(f"report: {write_html(result, _numbered(s.report, i))}")
        if s.junit:
            from reports import write_junit

            state.written.append(f"junit: {write_junit(result, _numbered(s.junit, i))}")


def _numbered(path: Path, i: int) -> Path:
    return path if i == 0 else path.with_name(f"{path.stem}-{i + 1}{path.suffix}")


def _reports(parts: list[tuple[str, CampaignResult]]) -> list[CampaignResult]:
    """As few reports as honest: shards of one campaign merged (`merge_results`), then
    campaigns with one engine, tier and seed over different scenarios side by side; a
    scenario campaigned twice (two tests, other options) gets a report of its own."""
    from harness.merge import merge_results

    sharded: dict[tuple[object, ...], list[CampaignResult]] = {}
    whole: list[CampaignResult] = []
    for _, result in parts:
        if result.shard is None:
            whole.append(result)
        else:
            key = (
                _kind(result),
                tuple(c.scenario for c in result.scenarios),
                result.shard.split("/")[1],
            )
            sharded.setdefault(key, []).append(result)
    whole.extend(merge_results(group) for group in sharded.values())
    reports: list[list[CampaignResult]] = []
    for result in whole:
        names = {c.scenario for c in result.scenarios}
        home = next(
            (
                g
                for g in reports
                if _kind(g[0]) == _kind(result)
                and not names & {c.scenario for r in g for c in r.scenarios}
            ),
            None,
        )
        if home is None:
            reports.append([result])
        else:
            home.append(result)
    return [_side_by_side(group) for group in reports]


def _kind(result: CampaignResult) -> tuple[str, str, int]:
    return result.engine, result.tier, result.seed


def _side_by_side(group: list[CampaignResult]) -> CampaignResult:
    if len(group) == 1:
        return group[0]
    first = group[0]
    return first.model_copy(
        update={
            "backend": ", ".join(sorted({r.backend.split("://")[0] for r in group})),
            "started_at": min(r.started_at for r in group),
            "duration_s": sum(r.duration_s for r in group),
            "scenarios": [c for r in group for c in r.scenarios],
            "runs": [run for r in group for run in r.runs],
            "mutants": [m for r in group for m in r.mutants],
        }
    )


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or hasattr(config, "workerinput"):
        return
    if not state.parts:
        return
    terminalreporter.section("killpoint")
    runs = sum(len(r.runs) for _, r in state.parts)
    bad = sum(len(r.violations) for _, r in state.parts)
    terminalreporter.write_line(f"{len(state.parts)} campaigns, {runs} runs, {bad} violating")
    for line in state.written:
        terminalreporter.write_line(line)


__all__ = [
    "CampaignRunner",
    "Databases",
    "KillSwitchFactory",
    "Settings",
]
