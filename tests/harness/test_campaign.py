"""Campaigns against the reference engine: every boundary crashed, no violation, in both tiers;
shards that merge into the unsharded result."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint import scenarios
from killpoint.harness.campaign import Campaign, CampaignConfig
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.merge import merge_results
from killpoint.harness.results import CampaignResult
from killpoint.reports import campaign_metrics


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
        tmp_path, "inproc", scenarios=list(scenarios.CATALOGUE.values()), double_limit=25
    )
    _assert_every_boundary_crashed_without_violation(result)
    kinds = {r.kind for r in result.runs}
    assert kinds == {"clean", "single", "double", "pair", "network", "named"}


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
