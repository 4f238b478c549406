"""The pytest plugin's options: generated from the options models, read from the command line,
the environment and the ini file (in that order of precedence), and every one of them — and
every argument of the marker — shown to reach the campaign's `CampaignConfig`."""

from __future__ import annotations

import re

import pytest

from killpoint.harness.campaign import jobs
from killpoint.harness.campaign.execute import CampaignConfig
from killpoint.harness.options import CampaignOptions, Option, SessionOptions, declared
from killpoint.harness.pytest_plugin import MARKER_ARGS
from killpoint.harness.results import CampaignResult
from tests.support.options import IN_CONFIG, empty_result, sample
from tests.support.pytester import clean_environment, run

pytest_plugins = ["pytester"]
__all__ = ["clean_environment"]  # the sessions under test see only what each test gives them

PYTEST = declared(CampaignOptions, "pytest")
MARKER = declared(CampaignOptions, "marker")
ONE_CAMPAIGN = """
def test_campaign(killpoint_campaign):
    killpoint_campaign("email")
"""


@pytest.fixture
def campaigns(monkeypatch: pytest.MonkeyPatch) -> list[CampaignConfig]:
    """What the sessions under test (in this process) ask `jobs.run_campaign` to run."""
    seen: list[CampaignConfig] = []

    def run_campaign(config: CampaignConfig, n: int) -> CampaignResult:
        assert n == 1  # a test's campaign runs in the test's own process
        seen.append(config)
        return empty_result(config)

    monkeypatch.setattr(jobs, "run_campaign", run_campaign)
    return seen


def typed(spec: Option) -> object:
    return getattr(CampaignOptions().merged({spec.name: sample(spec)}), spec.name)


def flag_words(spec: Option) -> str:
    if spec.hint is not bool:
        return f"{spec.pytest_flag}={sample(spec)}"
    off = "--killpoint-no-" + spec.pytest_flag.removeprefix("--killpoint-")
    return spec.pytest_flag if typed(spec) else off


def test_options_are_grouped_and_prefixed_in_help(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    result.stdout.fnmatch_lines(
        [
            "killpoint crash campaigns:",
            "*--killpoint-engine=ENGINE*",
            "*--killpoint-tier=TIER*",
            "*--killpoint-db=URL*",
            "*--killpoint-no-double*",
            "*--killpoint-double-limit=N*",
            "*--killpoint-no-interleave*",
            "*--killpoint-no-network*",
            "*--killpoint-no-named*",
            "*--killpoint-seed=N*",
            "*--killpoint-report=PATH*",
            "*--killpoint-junit=PATH*",
            "*--killpoint-replay=FILE*",
        ]
    )
    result.stdout.fnmatch_lines(["*killpoint_db (string)*", "*killpoint_seed (string)*"])


def test_header_names_seed_tier_engine_store_and_hypothesis_profile(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester, "--co", "-p", "hypothesispytest", "--killpoint-seed=7", "--hypothesis-profile=ci"
    )
    result.stdout.fnmatch_lines(
        [
            "killpoint: seed 7, tier inprocess, engine reference, store sqlite, a file per "
            "campaign in the test's tmp_path (no --killpoint-db*",
            "killpoint hypothesis profile: ci",
        ]
    )


def test_option_beats_environment_beats_ini(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nkillpoint_seed = 11\nkillpoint_tier = real\n")
    run(pytester, "--co").stdout.fnmatch_lines(["killpoint: seed 11, tier real,*"])
    monkeypatch.setenv("KILLPOINT_SEED", "12")
    monkeypatch.setenv("KILLPOINT_DATABASE_URL", "postgresql+psycopg://kp:secret@db.test/x")
    result = run(pytester, "--co")
    result.stdout.fnmatch_lines(
        [
            "killpoint: seed 12, *store postgresql+psycopg://kp:***@db.test/x (from "
            "KILLPOINT_DATABASE_URL), a fresh schema per campaign"
        ]
    )
    assert "secret" not in result.stdout.str()
    run(pytester, "--co", "--killpoint-seed=13").stdout.fnmatch_lines(["killpoint: seed 13,*"])


def test_random_seed_is_kept_for_last(pytester: pytest.Pytester) -> None:
    first = run(pytester, "--co", "--killpoint-seed=random")
    seed = re.search(r"killpoint: seed (\d+),", first.stdout.str())
    assert seed is not None
    again = run(pytester, "--co", "--killpoint-seed=last")
    again.stdout.fnmatch_lines([f"killpoint: seed {seed.group(1)},*"])


def test_bad_tier_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--killpoint-tier=cloud")
    result.stderr.fnmatch_lines(["*--killpoint-tier wants one of inprocess, real, got 'cloud'*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_every_plugin_option_and_ini_value_comes_from_the_models(
    pytester: pytest.Pytester,
) -> None:
    config = pytester.parseconfig("-p", "killpoint")
    names = {
        d.removeprefix("killpoint_") for d in vars(config.option) if d.startswith("killpoint_")
    }
    declared_names = {s.name for s in PYTEST + declared(SessionOptions, "pytest")}
    assert names == declared_names
    for name in declared_names:
        assert config.getini(f"killpoint_{name}") == ""  # registered, and unset


@pytest.mark.parametrize("source", ["command line", "environment", "ini"])
def test_each_campaign_option_of_the_plugin_reaches_the_campaign_config(
    source: str,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    campaigns: list[CampaignConfig],
) -> None:
    args = [flag_words(s) for s in PYTEST] if source == "command line" else []
    if source == "environment":
        for spec in PYTEST:
            monkeypatch.setenv(spec.env_var, sample(spec))
    if source == "ini":
        pytester.makeini("[pytest]\n" + "".join(f"{s.ini} = {sample(s)}\n" for s in PYTEST))
    pytester.makepyfile(ONE_CAMPAIGN)
    run(pytester, *args).assert_outcomes(passed=1)
    [config] = campaigns
    for spec in PYTEST:
        assert IN_CONFIG[spec.name](config, 1) == typed(spec), spec.name
        assert typed(spec) != spec.default


def test_without_settings_a_campaign_has_the_models_defaults_the_clis_own(
    pytester: pytest.Pytester, campaigns: list[CampaignConfig]
) -> None:
    """One default per option: a marker that says nothing interleaves, as `killpoint run`."""
    pytester.makepyfile(ONE_CAMPAIGN)
    run(pytester).assert_outcomes(passed=1)
    [config] = campaigns
    defaults = CampaignConfig(scenarios=[], workdir=config.workdir, engine=config.engine)
    for name in ("tier", "double", "double_limit", "interleave", "network", "named", "seed"):
        assert getattr(config, name) == getattr(defaults, name), name
    assert config.interleave is True and config.engine.ref == "reference"


def test_each_marker_argument_reaches_the_campaign_config_and_a_call_beats_it(
    pytester: pytest.Pytester, campaigns: list[CampaignConfig]
) -> None:
    assert {s.name for s in MARKER} | {"scenario", "fail_on_violation"} == MARKER_ARGS
    given = ", ".join(f"{s.name}={typed(s)!r}" for s in MARKER)
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.killpoint("email", {given})
        def test_campaign(killpoint_campaign):
            killpoint_campaign()
            killpoint_campaign(double_limit=3)
        """
    )
    run(pytester, "--killpoint-double-limit=99").assert_outcomes(passed=1)
    marked, called = campaigns
    for spec in MARKER:  # the marker beats the command line …
        assert IN_CONFIG[spec.name](marked, 1) == typed(spec), spec.name
    assert called.double_limit == 3 and called.seed == marked.seed  # … and a call, the marker


def test_a_bad_marker_value_fails_its_test_naming_the_argument(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.killpoint("email", double_limit="many")
        def test_campaign(): pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*killpoint: double_limit='many' wants a whole number*"])
