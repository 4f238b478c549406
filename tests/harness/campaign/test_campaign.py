"""Campaigns against the reference engine: every boundary crashed, no violation, in both tiers;
shards that merge into the unsharded result."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from killpoint import scenarios
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.merge import merge_results
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.results import CampaignResult, RunResult
from killpoint.harness.scenario import Expect, NamedCase, Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.reports import campaign_metrics
from tests.support.fixtures import THOROUGH


def _campaign(tmp_path: Path, name: str, **options: object) -> CampaignResult:
    config = CampaignConfig(engine=REFERENCE, workdir=tmp_path / name, **options)  # type: ignore[arg-type]
    with Campaign(config) as campaign:
        return campaign.run()


def _assert_every_boundary_crashed_without_violation(result: CampaignResult) -> None:
    for coverage in result.scenarios:
        assert coverage.boundaries_discovered, coverage.scenario
        assert coverage.boundaries_crashed == coverage.boundaries_discovered, coverage.scenario
    bad = [
        (r.scenario, r.label, [v.summary for v in r.verdicts if v.valid is False])
        for r in result.violations
    ]
    assert bad == []


def test_reference_engine_survives_every_single_and_paired_crash_in_process(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    result = _campaign(
        tmp_path,
        "inproc",
        scenarios=list(scenarios.CATALOGUE.values()),
        double_limit=25 if THOROUGH else 8,  # every pair the main job samples: `thorough`
    )
    _assert_every_boundary_crashed_without_violation(result)
    kinds = {r.kind for r in result.runs}
    assert kinds == {
        "clean", "single", "double", "pair", "network", "named", "deploy", "generated", "real"
    }  # fmt: skip


@pytest.mark.realtier
def test_reference_engine_survives_every_sigkill_in_the_real_tier(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    result = _campaign(
        tmp_path,
        "real",
        scenarios=list(scenarios.CATALOGUE.values()),
        tier="real",
        double=False,
        network=False,
        named=False,
        deploys=False,
        explore="3",  # a few generated schedules in the real tier too; the plan is the point
    )
    _assert_every_boundary_crashed_without_violation(result)
    assert all(r.measures.deaths == 1 for r in result.runs if r.kind == "single")


def test_shards_merge_into_the_unsharded_campaign(tmp_path: Path, checkpoint_key: bytes) -> None:
    chosen = [scenarios.get("order_saga"), scenarios.get("email")]
    whole = _campaign(tmp_path, "whole", scenarios=chosen, double_limit=20)
    parts = [
        _campaign(tmp_path, f"shard{i}", scenarios=chosen, double_limit=20, shard=(i, 2))
        for i in (1, 2)
    ]
    assert all(0 < len(p.runs) < len(whole.runs) for p in parts)
    merged = merge_results(parts)

    def verdicts(result: CampaignResult) -> dict[tuple[str, str], object]:
        return {
            (r.scenario, r.run_id): (
                r.final_status,
                r.valid,
                [(v.checker, v.valid) for v in r.verdicts],
            )
            for r in result.runs
        }

    assert verdicts(merged) == verdicts(whole)
    assert [c.boundaries_crashed for c in merged.scenarios] == [
        c.boundaries_crashed for c in whole.scenarios
    ]
    assert [(c.runs, c.violations) for c in merged.scenarios] == [
        (c.runs, c.violations) for c in whole.scenarios
    ]  # each shard's recording counted once
    m_whole, m_merged = campaign_metrics(whole), campaign_metrics(merged)
    for field in (
        "runs",
        "violations",
        "resume_success",
        "duplicate_effects",
        "needs_review",
        "within_budget",
        "coverage",
        "migration_failures",
    ):
        assert getattr(m_merged, field) == getattr(m_whole, field), field


def _team_scenario(expect: Expect) -> Scenario:
    """A team's own scenario, outside every catalogue, that brings a named case of its own: the
    worker dies as the e-mail is about to be sent."""
    crash = HitPoint(worker=0, step="notify", boundary="effect.started")
    schedule = FaultSchedule(scenario="team_welcome", run_id="case-team", crashes=(crash,))
    case = NamedCase("team_case", "ours", schedule, "the send in doubt goes to review", expect)
    return replace(scenarios.CATALOGUE["email"], name="team_welcome", cases=(case,))


def _named_runs(tmp_path: Path, scenario: Scenario) -> list[RunResult]:
    result = _campaign(
        tmp_path, "team", scenarios=[scenario], double=False, network=False, interleave=False
    )
    return [r for r in result.runs if r.kind == "named"]


def test_a_team_scenario_brings_its_named_cases_and_their_expected_recovery_is_judged(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    def review(h: History) -> str | None:
        return None if h.final_status == "needs_review" else f"ended {h.final_status}"

    (run,) = _named_runs(tmp_path, _team_scenario(review))
    assert run.run_id == "case-team" and run.valid is True
    assert {v.checker: v.valid for v in run.verdicts}["expected_recovery"] is True


def test_a_team_named_case_whose_expectation_fails_is_a_violation(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    def completes(h: History) -> str | None:
        return None if h.final_status == "completed" else f"ended {h.final_status}"

    (run,) = _named_runs(tmp_path, _team_scenario(completes))
    assert run.valid is False
    (verdict,) = [v for v in run.verdicts if v.valid is False]
    assert verdict.checker == "expected_recovery" and "needs_review" in verdict.summary


def test_a_campaign_tells_how_many_runs_it_will_make_before_its_first_and_then_exactly(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    """Progress needs a total: the recordings come first, so the first word on it comes before
    any run is reported, close to the count; the last word is the count of runs made."""
    events: list[tuple[str, int]] = []
    config = CampaignConfig(
        engine=REFERENCE,
        scenarios=[scenarios.get("email")],
        workdir=tmp_path,
        double_limit=30,
        explore="4",
        on_run=lambda run: events.append(("run", 1)),
        on_plan=lambda total: events.append(("plan", total)),
    )
    with Campaign(config) as campaign:
        result = campaign.run()
    totals = [n for kind, n in events if kind == "plan"]
    made = len(result.runs)
    assert events[0][0] == "plan" and sum(n for kind, n in events if kind == "run") == made
    assert abs(totals[0] - made) <= 0.1 * made, (totals, made)
    assert totals[-1] == made, totals
