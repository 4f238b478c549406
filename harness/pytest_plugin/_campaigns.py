"""The working half of the pytest plugin: test databases, campaigns, violations, the report.

`harness.pytest_plugin` must load without the engine, so everything that needs the engine, the
store or the fake services lives here and is imported by the plugin's fixtures and hooks on
first use.
"""

from __future__ import annotations

import re
import shlex
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from killpoint.harness.campaign import launch
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.merge import merge_results
from killpoint.harness.catalogue import installed
from killpoint.harness.options import CampaignOptions, OptionError
from killpoint.harness.pytest_plugin._settings import MARKER_ARGS, Campaigned, Settings
from killpoint.harness.results import CampaignResult, ExpectedCatch, RunResult, ScenarioCoverage
from killpoint.harness.run.databases import create_schema, drop_schemas, is_postgres, with_schema
from killpoint.harness.run.killswitch import Hit, KillSwitch
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, load_schedule
from killpoint.reports import write_html, write_junit

SHOWN_VIOLATIONS = 10


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
        if not is_postgres(self.base):
            return self.base, None

        schema = f"kp_{uuid.uuid4().hex[:16]}"
        create_schema(self.base, schema)
        self.schemas.append(schema)
        return with_schema(self.base, schema), schema

    def drop(self) -> None:
        if self.schemas and self.base is not None:
            drop_schemas(self.base, self.schemas)


class KillSwitchFactory:
    """`killpoint_killswitch(schedule, worker=0)`: the boundary hook of one worker; every hit
    of every switch it built is in `.hits`."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.hits: list[Hit] = []

    def __call__(self, schedule: FaultSchedule, worker: int = 0) -> KillSwitch:

        clock = self.world.clock
        return KillSwitch(worker, schedule, clock, self.hits.append, advance=clock.advance)


class CampaignRunner:
    """The `killpoint_campaign` fixture: `killpoint_campaign(*scenarios, **options)` runs a
    crash campaign and returns its `CampaignResult`.

    Scenarios are catalogue names or `Scenario` objects (a team's own workflow, adapters and
    expected effects). Options are the marker's: the `CampaignOptions` the marker offers
    (engine — "module:factory", an `EngineSpec` or a factory —, tier, double, double_limit,
    interleave, network, named, seed, shard=(i, n)) and fail_on_violation. A call's arguments
    beat the marker's, which beat the session's (command line, environment, ini).
    """

    def __init__(
        self,
        request: pytest.FixtureRequest,
        databases: Databases,
        workdir: Path,
        marker_args: Sequence[Any],
        marker_kwargs: dict[str, Any],
        settings: Settings,
        record: Callable[[str, CampaignResult, bool], None],
    ) -> None:
        self.request, self.databases, self.workdir = request, databases, workdir
        self.marker_args, self.marker_kwargs = tuple(marker_args), marker_kwargs
        self.settings, self.record = settings, record
        self.runs: list[tuple[list[Scenario], CampaignResult, bool]] = []  # (…, enforced)
        unknown = set(marker_kwargs) - MARKER_ARGS
        if unknown:
            pytest.fail(
                f"@pytest.mark.killpoint got unknown arguments {sorted(unknown)}; "
                f"it takes {sorted(MARKER_ARGS)}",
                pytrace=False,
            )
        self.options(marker_kwargs)  # a bad value fails the test before it starts

    @property
    def results(self) -> list[CampaignResult]:
        return [r for _, r, _ in self.runs]

    @property
    def result(self) -> CampaignResult | None:
        return self.runs[-1][1] if self.runs else None

    def options(self, given: dict[str, Any]) -> CampaignOptions:
        """The session's options with the campaign options among `given` (the marker's or a
        call's) applied; a bad value fails the test with the argument it came from."""
        chosen = {k: v for k, v in given.items() if k not in ("scenario", "fail_on_violation")}
        engine = chosen.get("engine", self.settings.campaign.engine)
        chosen["engine"] = engine if isinstance(engine, str) else None
        try:
            return self.settings.campaign.merged(chosen, "marker")
        except OptionError as exc:
            pytest.fail(
                f"killpoint: {exc.name}={given.get(exc.name)!r} {exc.message}", pytrace=False
            )

    def __call__(self, *scenarios: str | Scenario, **options: Any) -> CampaignResult:
        unknown = set(options) - MARKER_ARGS
        if unknown:
            raise TypeError(f"killpoint_campaign got unknown options {sorted(unknown)}")
        given = {**self.marker_kwargs, **options}
        chosen = launch.resolve_scenarios(scenarios or given.get("scenario") or self.marker_args)
        if not chosen:
            pytest.fail(
                "killpoint_campaign needs a scenario: @pytest.mark.killpoint(scenario=...) or "
                "killpoint_campaign(scenario)",
                pytrace=False,
            )
        n = len(self.runs) + 1
        url, _ = self.databases.allocate(f"campaign-{n}")  # this test's own database
        run_options = self.options(given).merged({"db": url})
        engine = launch.resolve_engine(given.get("engine", self.settings.campaign.engine))
        workdir = self.workdir / f"campaign-{n}"
        if self.settings.session.replay is not None:
            config = CampaignConfig.of(run_options, chosen, workdir, engine)
            result = self._replay(config, self.settings.session.replay)
        else:
            result = launch.start(chosen, engine, run_options, workdir)
        enforced = bool(given.get("fail_on_violation", True))
        self.runs.append((chosen, result, enforced))
        self.record(self.request.node.nodeid, result, enforced)
        return result

    def _replay(self, config: CampaignConfig, schedule_file: Path) -> CampaignResult:
        """Run the `--killpoint-replay` schedule alone, judged as the campaign judges it."""
        schedule = load_schedule(schedule_file)
        scenario = next((c for c in config.scenarios if c.name == schedule.scenario), None)
        if scenario is None:
            names = ", ".join(c.name for c in config.scenarios)
            pytest.skip(
                f"--killpoint-replay is a schedule of {schedule.scenario!r}; "
                f"this test campaigns over {names}"
            )
        config = replace(config, tier=schedule.tier)
        case = scenario.case(schedule.run_id)
        started = time.perf_counter()
        with Campaign(config) as campaign:
            run, _ = campaign.execute(scenario, schedule, "replay", case.expect if case else None)
        coverage = ScenarioCoverage(
            scenario=scenario.name,
            boundaries_discovered=[],
            boundaries_crashed=run.crashed_at,
            runs=1,
            violations=int(run.valid is False),
        )
        return CampaignResult(
            engine=config.engine.name,
            lacks=sorted(config.engine.lacks),
            tier=schedule.tier,
            backend=campaign.world.store.label,
            seed=config.seed,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            duration_s=time.perf_counter() - started,
            scenarios=[coverage],
            runs=[run],
        )

    def violations_message(self) -> str | None:
        """What failed, as a reader wants it: checker, evidence, and how to replay each run."""
        lines: list[str] = []
        for scenarios, result, enforce in self.runs:
            bad = result.violations
            if not enforce or not bad:
                continue
            names = ", ".join(c.scenario for c in result.scenarios)
            lines.append(
                f"killpoint: {len(bad)} of {len(result.runs)} runs of {names} violate the oracle "
                f"(engine {result.engine}, tier {result.tier}, seed {result.seed})"
            )
            for run in bad[:SHOWN_VIOLATIONS]:
                lines.extend(self._describe(run, scenarios))
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

    def _describe(self, run: RunResult, scenarios: Sequence[Scenario]) -> list[str]:
        """A violating run: its checkers and evidence, and the commands that replay it — this
        test with `--killpoint-replay`, always complete; `killpoint replay FILE` alone too when
        the file names its engine and its scenario is the installed catalogue's own."""
        lines = [f"✗ {run.scenario} {run.label} → {run.final_status}"]
        for verdict in run.verdicts:
            if verdict.valid is False:
                lines.append(f"    [{verdict.checker}] {verdict.summary}")
                lines.extend(f"        {e}" for e in verdict.evidence[:3])
        if run.schedule_file:
            kept = shlex.quote(self._keep(Path(run.schedule_file)))
            node = shlex.quote(self.request.node.nodeid)
            lines.append(f"    replay: pytest {node} --killpoint-replay={kept}")
            scenario = next(s for s in scenarios if s.name == run.scenario)
            installed_one = installed().scenarios.get(run.scenario)
            if run.schedule.engine is not None and installed_one == scenario:
                lines.append(f"    replay: killpoint replay {kept}")
        return lines


def write_reports(parts: list[Campaigned], report: Path | None, junit: Path | None) -> list[str]:
    """Write the session's report files; one line per file written, for the summary. The
    broken engines tests caught as expected go into the first report, in a section of their
    own: their runs count in none of its figures."""
    written: list[str] = []
    reports = _reports([(p.test, p.result) for p in parts if not p.expected])
    catches = [ExpectedCatch.of(p.test, p.result) for p in parts if p.expected]
    if catches:
        first = reports[0] if reports else _catches_alone([p.result for p in parts if p.expected])
        reports[:1] = [first.model_copy(update={"caught_as_expected": catches})]
    for i, result in enumerate(reports):
        if report is not None:
            written.append(f"report: {write_html(result, _numbered(report, i))}")
        if junit is not None:
            written.append(f"junit: {write_junit(result, _numbered(junit, i))}")
    return written


def _catches_alone(caught: list[CampaignResult]) -> CampaignResult:
    """The page of a session whose campaigns were all caught as expected: their header, no
    runs of its own."""
    engines = ", ".join(dict.fromkeys(r.engine for r in caught))
    return caught[0].model_copy(
        update={"engine": engines, "lacks": [], "scenarios": [], "runs": [], "mutants": []}
    )


def parse_result(text: str) -> CampaignResult:
    return CampaignResult.model_validate_json(text)


def _numbered(path: Path, i: int) -> Path:
    return path if i == 0 else path.with_name(f"{path.stem}-{i + 1}{path.suffix}")


def _reports(parts: list[tuple[str, CampaignResult]]) -> list[CampaignResult]:
    """As few reports as honest: shards of one campaign merged (`merge_results`), then
    campaigns with one engine, tier and seed over different scenarios side by side; a
    scenario campaigned twice (two tests, other options) gets a report of its own."""

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
