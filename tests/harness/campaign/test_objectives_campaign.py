"""Recovery objectives in a campaign: a scenario with tight objectives has its misses flagged
(and replayable), one with loose objectives none, and no miss is ever a violation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.cli import app
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.objectives import RecoveryObjectives
from killpoint.harness.operator import QUEUED
from killpoint.harness.results import CampaignResult
from killpoint.harness.schedule import FaultSchedule, HitPoint, load_schedule, save_schedule
from killpoint.reports import summary_json
from killpoint.scenarios import CATALOGUE
from tests.support.fixtures import TEST_KEY


def _campaign(tmp_path: Path, objectives: RecoveryObjectives | None) -> CampaignResult:
    scenario = replace(CATALOGUE["email"], objectives=objectives, cases=())
    config = CampaignConfig(
        scenarios=[scenario],
        workdir=tmp_path,
        engine=REFERENCE,
        double=False,
        interleave=False,
        network=False,
        explore="0",
    )
    with Campaign(config) as campaign:
        return campaign.run()


@pytest.mark.usefixtures("checkpoint_key")
def test_tight_objectives_flag_misses_that_are_no_violation(tmp_path: Path) -> None:
    # the campaign's 60 s downtime alone misses a 1 s RTO; a crash inside a step redoes it
    result = _campaign(tmp_path, RecoveryObjectives(rpo_steps=0, rto_s=1.0))
    crashed = [r for r in result.runs if r.measures.deaths]
    assert crashed and not result.violations
    for run in crashed:
        assert run.objectives is not None and run.objectives.rto == "missed", run.label
        assert run.schedule_file is not None and load_schedule(run.schedule_file) == run.schedule
    assert any(r.objectives and r.objectives.rpo == "missed" for r in crashed)
    clean = next(r for r in result.runs if r.kind == "clean")
    assert clean.objectives is not None and clean.objectives.rto == "no_crash"
    counts = summary_json(result)["metrics"]["objectives"]
    assert counts["runs_missed_rto"] == len(crashed)
    assert 0 < counts["runs_missed_rpo"] < len(crashed)  # a crash between steps loses none


@pytest.mark.usefixtures("checkpoint_key")
def test_loose_objectives_flag_none_and_undeclared_ones_judge_none(tmp_path: Path) -> None:
    loose = _campaign(tmp_path / "loose", RecoveryObjectives(rpo_steps=1, rto_s=3600.0))
    assert [r.label for r in loose.runs if r.objectives and r.objectives.missed] == []
    # a run in doubt keeps its schedule all the same, for the report's replay command
    doubted = [r for r in loose.runs if r.valid == "unknown" or r.final_status in QUEUED]
    assert all(r.schedule_file is None for r in loose.runs if r not in doubted)
    undeclared = _campaign(tmp_path / "undeclared", None)
    judged = {r.objectives.rto for r in undeclared.runs if r.objectives}
    assert judged == {"not_declared", "no_crash"}
    summary = summary_json(undeclared)["metrics"]["objectives"]
    assert (summary["declared"], summary["runs_missed"]) == (0, 0)


def test_a_replay_shows_the_runs_objectives_against_the_installed_scenarios(
    tmp_path: Path,
) -> None:
    schedule = FaultSchedule(
        scenario="email",
        run_id="in-step",
        engine="reference",
        crashes=(HitPoint(worker=0, step="notify", boundary="effect.prepared"),),
    )
    path = save_schedule(schedule, tmp_path / "in-step.json")
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})
    done = runner.invoke(app, ["replay", str(path), "--workdir", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    line = done.output.splitlines()[-1].strip()
    assert line == (  # the catalogue's e-mail: one step redone at most, back within 300 s
        "objectives: RPO met (worst 1 step redone, declared 1 step) · "
        "RTO met (worst 60 s, declared 300 s)"
    )
