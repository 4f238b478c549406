"""Run results with raw measures, for the report's metrics."""

from __future__ import annotations

from killpoint.harness.results import CampaignResult


def with_run_measures(campaign: CampaignResult, run_id: str, **update: object) -> CampaignResult:
    runs = [
        r.model_copy(update={"measures": r.measures.model_copy(update=update)})
        if r.run_id == run_id
        else r
        for r in campaign.runs
    ]
    return campaign.model_copy(update={"runs": runs})
