"""Campaign metrics: the seed's operational list, each pinned against hand-computed values."""

from __future__ import annotations

import json

import pytest

from killpoint.harness.results import CampaignResult
from killpoint.reports.metrics import campaign_metrics, percentile, summary_json
from tests.support.metrics import with_run_measures


def test_percentile_is_nearest_rank_and_none_without_values() -> None:
    assert percentile([], 50) is None
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 95) == 4.0
    assert percentile([7.0], 5) == 7.0


def test_resume_success_counts_recovered_runs_among_runs_with_a_death(
    campaign: CampaignResult,
) -> None:
    rate = campaign_metrics(campaign).resume_success
    assert (rate.count, rate.of) == (3, 5)  # r1, r2, p1; not r7 (charged twice) nor p2
    assert rate.value == pytest.approx(0.6)


def test_a_run_that_charged_twice_is_not_a_successful_resume(campaign: CampaignResult) -> None:
    duplicate = next(r for r in campaign.runs if r.measures.duplicate_effects)
    assert duplicate.measures.recovered and duplicate.valid is False
    only = campaign.model_copy(update={"runs": [duplicate]})
    rate = campaign_metrics(only).resume_success
    assert (rate.count, rate.of) == (0, 1)
    assert rate.value is not None and rate.value < 1.0


def test_a_run_without_a_death_does_not_count_toward_resume_success(
    campaign: CampaignResult,
) -> None:
    changed = with_run_measures(campaign, "r0", recovered=False)
    rate = campaign_metrics(changed).resume_success
    assert (rate.count, rate.of) == (3, 5)


def test_duplicate_effect_rate_is_runs_with_a_duplicate_over_all_runs(
    campaign: CampaignResult,
) -> None:
    rate = campaign_metrics(campaign).duplicate_effects
    assert (rate.count, rate.of) == (1, 8)
    more = with_run_measures(campaign, "r0", duplicate_effects=3)
    assert campaign_metrics(more).duplicate_effects.count == 2


def test_unresolved_effect_age_covers_only_runs_that_had_one(campaign: CampaignResult) -> None:
    age = campaign_metrics(campaign).unresolved_effect_age_s
    assert sorted(age.values) == [60.0, 300.0]
    assert (age.p50, age.max) == (60.0, 300.0)


def test_recovery_time_is_measured_over_resumed_runs(campaign: CampaignResult) -> None:
    rt = campaign_metrics(campaign).recovery_time
    assert sorted(rt.clock_s.values) == [60.0, 60.0, 61.0, 120.0, 130.0]
    assert (rt.clock_s.p50, rt.clock_s.p95, rt.clock_s.max) == (61.0, 130.0, 130.0)
    assert (rt.steps.p50, rt.steps.max) == (6.0, 13.0)
    assert rt.wall_s.max == pytest.approx(0.05)


def test_checkpoints_per_successful_run_excludes_violating_and_unfinished_runs(
    campaign: CampaignResult,
) -> None:
    dist = campaign_metrics(campaign).checkpoints_per_successful_run
    assert sorted(dist.values) == [3.0, 3.0, 5.0, 5.0, 5.0]
    assert dist.mean == pytest.approx(4.2)


def test_storage_growth_per_workflow_and_per_step(campaign: CampaignResult) -> None:
    storage = campaign_metrics(campaign).storage
    assert storage.rows_per_workflow == pytest.approx(88 / 8)
    assert storage.bytes_per_workflow == pytest.approx(27_500 / 8)
    assert storage.rows_per_step == pytest.approx(88 / 69)
    assert storage.bytes_per_step == pytest.approx(27_500 / 69)
    assert (12, 5200) in storage.points and len(storage.points) == 8


def test_migration_failures_are_summed_and_runs_counted(campaign: CampaignResult) -> None:
    changed = with_run_measures(campaign, "r0", migration_failures=2)
    metrics = campaign_metrics(changed)
    assert (metrics.migration_failures, metrics.runs_with_migration_failures) == (3, 2)


def test_needs_review_rate_is_manual_intervention_over_runs(campaign: CampaignResult) -> None:
    rate = campaign_metrics(campaign).needs_review
    assert (rate.count, rate.of) == (1, 8)


def test_within_budget_percentage_is_over_resumed_runs(campaign: CampaignResult) -> None:
    metrics = campaign_metrics(campaign)
    assert (metrics.within_budget.count, metrics.within_budget.of) == (4, 5)
    assert metrics.within_budget_pct == pytest.approx(80.0)


def test_boundary_coverage_compares_discovered_and_crashed_per_scenario(
    campaign: CampaignResult,
) -> None:
    cov = campaign_metrics(campaign).coverage
    assert (cov.discovered, cov.crashed) == (11, 4)
    saga = cov.scenarios[0]
    assert (saga.scenario, saga.discovered, saga.crashed) == ("order_saga", 8, 3)
    assert "charge:effect.receipt_committed" in saga.missing
    assert "charge:effect.prepared" not in saga.missing


def test_mutation_score_is_caught_over_mutants(campaign: CampaignResult) -> None:
    score = campaign_metrics(campaign).mutation_score
    assert score is not None and (score.count, score.of) == (2, 3)


def test_nothing_measured_gives_none_not_a_made_up_rate(empty: CampaignResult) -> None:
    metrics = campaign_metrics(empty)
    assert metrics.mutation_score is None
    assert metrics.resume_success.value is None
    assert metrics.duplicate_effects.value is None
    assert metrics.within_budget_pct is None
    assert metrics.recovery_time.clock_s.p50 is None
    assert metrics.storage.bytes_per_step is None
    assert metrics.coverage.ratio is None


def test_runs_without_steps_leave_per_step_storage_undefined(campaign: CampaignResult) -> None:
    zero = [
        r.model_copy(update={"measures": r.measures.model_copy(update={"steps": 0})})
        for r in campaign.runs
    ]
    storage = campaign_metrics(campaign.model_copy(update={"runs": zero})).storage
    assert storage.rows_per_step is None
    assert storage.rows_per_workflow == pytest.approx(11.0)


def test_summary_json_has_the_cli_keys_and_is_json(campaign: CampaignResult) -> None:
    summary = summary_json(campaign)
    json.dumps(summary)
    assert summary["scenarios"] == ["order_saga", "research_publish"]
    assert summary["runs"] == 8
    assert summary["valid"] is False
    saga = summary["per_scenario"]["order_saga"]
    assert saga["boundaries_discovered"]["count"] == 8
    assert saga["boundaries_crashed"]["labels"][-1] == "charge:transport.response_received"
    assert saga["boundaries_crashed"]["count"] == 3
    assert summary["metrics"]["resume_success"]["value"] == pytest.approx(0.6)


def test_summary_json_lists_each_failing_checker_with_evidence_and_schedule(
    campaign: CampaignResult,
) -> None:
    violations = summary_json(campaign)["violations"]
    assert len(violations) == 1
    v = violations[0]
    assert (v["checker"], v["scenario"]) == ("single_effect", "order_saga")
    assert v["schedule_file"] == "killpoint-out/schedules/order_saga-r7.json"
    assert len(v["evidence"]) == 2


def test_summary_json_of_an_unjudged_campaign_is_unknown(campaign: CampaignResult) -> None:
    runs = [r for r in campaign.runs if r.valid is not False]
    summary = summary_json(campaign.model_copy(update={"runs": runs}))
    assert summary["valid"] == "unknown"
    assert summary["violations"] == []
