"""Every flag of `killpoint run`, `mutants` and `hunt` reaches the campaign (or the hunt).

The walk reads the flags from the click commands themselves, gives each a value other than its
default, and shows where it lands: a `CampaignConfig` field, the number of processes, or — for
what only shapes the output — an explicit list below. A flag added tomorrow fails here until it
is shown to reach the campaign or listed as output. The campaign itself is not run: the seams
the commands call (`jobs.run_campaign` under `launch.start`, `hunt.hunt_outcome`,
`hunt.engine_hunt`) record what they were given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.core import TyperOption
from typer.testing import CliRunner

from killpoint.harness.campaign import hunt, jobs
from killpoint.harness.campaign.execute import CampaignConfig
from killpoint.harness.campaign.hunt import EngineHunt, HuntOutcome
from killpoint.harness.cli import app
from killpoint.harness.options import OPTIONS, CampaignOptions
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import CampaignResult, MutantResult
from killpoint.harness.scenario import Scenario
from tests.support.fixtures import TEST_KEY
from tests.support.options import IN_CONFIG, empty_result, sample

COMMANDS = typer.main.get_group(app).commands
# Flags that shape what a command writes, prints or keeps, not the campaign it runs; each one's
# effect is pinned below, in test_cli_run.py, test_cli_progress.py (quiet), (keep_campaigns)
# in test_clean.py or (trend) in test_cli_trend.py.
RUN_OUTPUTS = {
    *("workdir", "report", "junit", "out", "as_json", "quiet", "mutants", "mutant", "help"),
    *("keep_campaigns", "trend"),
}
MUTANTS_OUTPUTS = {"mutant", "workdir", "as_json", "report", "quiet", "help"}
MOVED = {"engine"}  # `mutants --engine` says to use `hunt --engine` (test_cli_hunt.py)
HUNT_OUTPUTS = {"first", "workdir", "as_json", "quiet", "help"}


@dataclass
class Hunted:
    spec: EngineSpec
    scenarios: list[Scenario]
    options: CampaignOptions
    processes: int = 0

    @property
    def config(self) -> CampaignConfig:
        return hunt.hunt_config(self.spec, self.scenarios, Path("hunt"), self.options)


IN_HUNT: dict[str, Callable[[Hunted], object]] = {
    "scenarios": lambda h: tuple(s.name for s in h.scenarios),
    "engine": lambda h: h.spec.ref,
    "jobs": lambda h: h.processes,
    # the phases, as the hunt's own config reads them
    **{
        name: (lambda h, name=name: getattr(h.config, name))  # type: ignore[misc]
        for name in hunt.HUNTED - {"scenarios", "engine", "jobs"}
    },
}


def flags(command: str, outputs: set[str]) -> list[str]:
    return [p.name for p in COMMANDS[command].params if p.name and p.name not in outputs]


def args_for(command: str, name: str) -> list[str]:
    """The command-line words that give option `name` its non-default sample value."""
    param = next(p for p in COMMANDS[command].params if p.name == name)
    assert isinstance(param, TyperOption)
    text = sample(OPTIONS[name])
    if param.is_flag:
        return [param.opts[0] if text == "true" else param.secondary_opts[0]]
    return [param.opts[0], text]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})


@pytest.fixture
def campaigns(monkeypatch: pytest.MonkeyPatch) -> list[tuple[CampaignConfig, int]]:
    """What `jobs.run_campaign` is asked to run; each answers with an empty result."""
    seen: list[tuple[CampaignConfig, int]] = []

    def run_campaign(config: CampaignConfig, n: int) -> CampaignResult:
        seen.append((config, n))
        return empty_result(config)

    monkeypatch.setattr(jobs, "run_campaign", run_campaign)
    return seen


@pytest.fixture
def hunts(monkeypatch: pytest.MonkeyPatch) -> list[Hunted]:
    """What each hunt is asked (in this process): every engine is caught at once."""
    seen: list[Hunted] = []

    def hunt_outcome(spec: EngineSpec, scenarios: Sequence[Scenario], world_dir: Path,
                     options: CampaignOptions, *, description: str) -> HuntOutcome:  # fmt: skip
        seen.append(Hunted(spec, list(scenarios), options))
        return HuntOutcome(MutantResult(mutant=spec.name, caught=True), None, 1)

    def hunts_in_processes(
        work: Sequence[Callable[[], Any]], n: int, on_done: Callable[[Any], None]
    ) -> list[Any]:
        first = len(seen)
        done = [w() for w in work]
        for result in done:
            on_done(result)
        for h in seen[first:]:
            h.processes = n
        return done

    monkeypatch.setattr(hunt, "hunt_outcome", hunt_outcome)
    monkeypatch.setattr(jobs, "hunts_in_processes", hunts_in_processes)
    return seen


def invoke(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout


def test_every_flag_of_run_is_an_option_of_the_model_or_an_output() -> None:
    assert set(flags("run", RUN_OUTPUTS)) == {s for s in OPTIONS if "run" in OPTIONS[s].fronts}
    assert set(flags("run", RUN_OUTPUTS)) <= IN_CONFIG.keys()


@pytest.mark.parametrize("name", flags("run", RUN_OUTPUTS))
def test_each_flag_of_run_reaches_the_campaign_config(
    name: str, runner: CliRunner, campaigns: list[tuple[CampaignConfig, int]], tmp_path: Path
) -> None:
    invoke(runner, "run", "--json", "--workdir", str(tmp_path))
    invoke(runner, "run", "--json", "--workdir", str(tmp_path), *args_for("run", name))
    (default, n0), (changed, n1) = campaigns
    wanted = getattr(CampaignOptions().merged({name: sample(OPTIONS[name])}), name)
    assert IN_CONFIG[name](changed, n1) == wanted
    assert IN_CONFIG[name](default, n0) != wanted


def test_the_output_flags_of_run_write_what_they_name(
    runner: CliRunner, campaigns: list[tuple[CampaignConfig, int]], tmp_path: Path
) -> None:
    out = invoke(runner, "run", "--workdir", str(tmp_path / "w"), "--report", str(tmp_path / "r"),
                 "--junit", str(tmp_path / "j"), "--out", str(tmp_path / "o"), "--json",
                 "--quiet")  # fmt: skip
    assert json.loads(out)["runs"] == 0
    assert (tmp_path / "r").read_text().startswith("<!DOCTYPE html>")
    assert "<testsuite" in (tmp_path / "j").read_text()
    assert CampaignResult.model_validate_json((tmp_path / "o").read_text()).runs == []
    [(config, _)] = campaigns
    assert config.workdir.parent == tmp_path / "w"  # a fresh folder of its own under it
    assert config.on_run is not None  # --quiet: a silent callback, the campaign the same


def test_mutants_on_run_hunts_every_mutant_with_the_campaigns_options(
    runner: CliRunner,
    campaigns: list[tuple[CampaignConfig, int]],
    hunts: list[Hunted],
    tmp_path: Path,
) -> None:
    from killpoint.harness.catalogue import installed

    out = invoke(runner, "run", "--mutants", "--json", "-s", "email", "--seed", "4",
                 "--no-double", "--jobs", "2", "--workdir", str(tmp_path))  # fmt: skip
    assert {m["mutant"] for m in json.loads(out)["mutants"]} == set(installed().mutants)
    assert {h.options.seed for h in hunts} == {4} and {h.processes for h in hunts} == {2}
    assert all(h.options.double is False for h in hunts)


def test_every_flag_of_mutants_is_a_shared_option_or_an_output() -> None:
    expected = {s for s in OPTIONS if "mutants" in OPTIONS[s].fronts} - MOVED
    assert set(flags("mutants", MUTANTS_OUTPUTS | MOVED)) == expected
    assert expected <= IN_HUNT.keys()


@pytest.mark.parametrize("name", flags("mutants", MUTANTS_OUTPUTS | MOVED))
def test_each_flag_of_mutants_reaches_the_hunt(
    name: str, runner: CliRunner, hunts: list[Hunted], tmp_path: Path
) -> None:
    base = ["mutants", "--json", "--workdir", str(tmp_path), "-m", "approvals_not_revalidated"]
    invoke(runner, *base)
    invoke(runner, *base, *args_for("mutants", name))
    default, changed = hunts
    wanted = getattr(CampaignOptions().merged({name: sample(OPTIONS[name])}), name)
    assert IN_HUNT[name](changed) == wanted
    assert IN_HUNT[name](default) != wanted


@pytest.fixture
def engine_hunts(monkeypatch: pytest.MonkeyPatch) -> list[Hunted]:
    """What `killpoint hunt` asks of its one hunt: it finds nothing."""
    seen: list[Hunted] = []

    def engine_hunt(spec: EngineSpec, scenarios: Sequence[Scenario], world_dir: Path,
                    options: CampaignOptions, **_: object) -> EngineHunt:  # fmt: skip
        seen.append(Hunted(spec, list(scenarios), options))
        return EngineHunt(spec.name, (), 0.0, whole=True)

    monkeypatch.setattr(hunt, "engine_hunt", engine_hunt)
    return seen


def test_every_flag_of_hunt_is_an_option_of_a_hunt_or_an_output() -> None:
    """A hunt of one engine runs in one process: `--jobs` is not offered."""
    expected = {s for s in OPTIONS if "mutants" in OPTIONS[s].fronts} - {"jobs"}
    assert set(flags("hunt", HUNT_OUTPUTS)) == expected


@pytest.mark.parametrize("name", flags("hunt", HUNT_OUTPUTS))
def test_each_flag_of_hunt_reaches_the_hunt(
    name: str, runner: CliRunner, engine_hunts: list[Hunted], tmp_path: Path
) -> None:
    base = ["hunt", "--json", "--workdir", str(tmp_path), "--engine", "reference"]
    invoke(runner, *base)
    invoke(runner, *base, *args_for("hunt", name))  # a second --engine is the one taken
    default, changed = engine_hunts
    wanted = getattr(CampaignOptions().merged({name: sample(OPTIONS[name])}), name)
    assert IN_HUNT[name](changed) == wanted
    assert IN_HUNT[name](default) != wanted


def test_a_bad_flag_value_is_one_line_naming_the_flag(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--double-limit", "-3", "--workdir", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == "killpoint: --double-limit -3: at least 0"
