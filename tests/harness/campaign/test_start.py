"""One way down: `killpoint run`, the pytest plugin and `killpoint.run_campaign` start their
campaigns through one call, `launch.start`, each with the options its user gave.

A front door that assembled a campaign of its own (its own config, its own processes) could
drift from the others: an option dropped on one door, a default changed on another. Here the one
call is replaced by a recorder, and each door is shown to reach it with the same options.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import killpoint
from killpoint.harness.campaign import launch
from killpoint.harness.cli import app
from killpoint.harness.options import CampaignOptions
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import CampaignResult
from killpoint.harness.scenario import Scenario
from tests.support.fixtures import TEST_KEY
from tests.support.pytester import clean_environment, run

pytest_plugins = ["pytester"]
__all__ = ["clean_environment"]  # the plugin's session sees only what the test gives it

ENGINE = "mutant:budgets_reset_on_restart"
# What the user asks of each door: a scenario, an engine, a seed and two phases changed.
GIVEN = CampaignOptions(engine=ENGINE, seed=5, double=False, explore="0")


@dataclass(frozen=True)
class Started:
    scenarios: list[str]
    engine: str | None
    options: CampaignOptions

    @property
    def asked(self) -> CampaignOptions:
        """The options but the two a door fills itself: the scenarios (passed resolved beside
        them) and the store (the plugin gives each test's campaign a database of its own)."""
        return dataclasses.replace(self.options, scenarios=(), db=None)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Started]:
    """Every campaign started, through the one call; none of them runs."""
    seen: list[Started] = []

    def start(
        scenarios: list[Scenario],
        engine: EngineSpec,
        options: CampaignOptions,
        workdir: Path,
        **progress: Any,
    ) -> CampaignResult:
        seen.append(Started([s.name for s in scenarios], engine.ref, options))
        return CampaignResult(engine=engine.name, tier=options.tier, backend="none",
                              started_at="2024-01-01T00:00:00", scenarios=[], runs=[])  # fmt: skip

    monkeypatch.setattr(launch, "start", start)
    return seen


def by_command(pytester: pytest.Pytester, tmp_path: Path) -> None:
    words = ["run", "-s", "email", "--engine", ENGINE, "--seed", "5", "--no-double"]
    done = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})
    result = done.invoke(app, [*words, "--explore", "0", "--workdir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr


def by_plugin(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.killpoint(scenario="email", engine={ENGINE!r}, seed=5, double=False,
                               explore="0")
        def test_campaign(killpoint_result):
            assert killpoint_result.runs == []
        """
    )
    run(pytester).assert_outcomes(passed=1)


def by_python(pytester: pytest.Pytester, tmp_path: Path) -> None:
    result = killpoint.run_campaign(
        "email", engine=ENGINE, seed=5, double=False, explore="0", workdir=tmp_path
    )
    assert result.runs == []


DOORS: dict[str, Callable[[pytest.Pytester, Path], None]] = {
    "killpoint run": by_command,
    "the pytest plugin": by_plugin,
    "killpoint.run_campaign": by_python,
}


@pytest.mark.parametrize("door", DOORS)
def test_each_front_door_starts_its_campaign_through_the_one_call_with_the_options_given(
    door: str, started: list[Started], pytester: pytest.Pytester, tmp_path: Path
) -> None:
    DOORS[door](pytester, tmp_path)
    [campaign] = started
    assert (campaign.scenarios, campaign.engine) == (["email"], ENGINE)
    assert campaign.asked == GIVEN
