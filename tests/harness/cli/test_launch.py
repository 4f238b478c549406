"""`killpoint.run_campaign`: a campaign from Python with the CLI's options and defaults, whose
violations replay with `killpoint replay FILE` alone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import killpoint
from killpoint.harness.cli import app
from killpoint.harness.options import CampaignOptions, OptionError
from tests.support.fixtures import TEST_KEY


def test_the_public_face_names_the_options_model_and_the_entry_point() -> None:
    assert killpoint.CampaignOptions is CampaignOptions
    assert {"CampaignOptions", "run_campaign"} <= set(killpoint.__all__)


def test_a_campaign_runs_the_scenarios_named_with_the_options_given(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    result = killpoint.run_campaign(
        "email",
        double=False,
        network=False,
        named=False,
        deploys=False,
        interleave=False,
        real_pass=False,
        explore="0",
        workdir=tmp_path,
    )
    assert [c.scenario for c in result.scenarios] == ["email"]
    assert {r.kind for r in result.runs} == {"clean", "single"}
    assert result.engine == "reference" and not result.violations


def test_a_violation_it_finds_replays_with_the_schedule_file_alone(
    tmp_path: Path, checkpoint_key: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = killpoint.run_campaign(
        "approval_refund",
        engine="mutant:budgets_reset_on_restart",
        double=False,
        network=False,
        interleave=False,
        workdir=tmp_path / "campaign",
    )
    [first, *_] = result.violations
    assert first.schedule_file and Path(first.schedule_file).is_relative_to(tmp_path)
    checker = next(v.checker for v in first.verdicts if v.valid is False)
    monkeypatch.chdir(tmp_path)
    replayed = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY}).invoke(
        app, ["replay", first.schedule_file]
    )
    assert replayed.exit_code == 1
    assert re.search(rf"{checker} +VIOLATION", replayed.stdout)


@pytest.mark.parametrize(
    ("options", "name"), [({"doubles": False}, "doubles"), ({"double_limit": "x"}, "double_limit")]
)
def test_an_unknown_option_or_a_bad_value_is_refused_before_anything_runs(
    options: dict[str, Any], name: str, tmp_path: Path
) -> None:
    with pytest.raises(OptionError) as caught:
        killpoint.run_campaign("email", workdir=tmp_path, **options)
    assert caught.value.name == name
    assert not any(tmp_path.iterdir())
