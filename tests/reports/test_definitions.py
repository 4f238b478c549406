"""Every figure the report prints has one definition, and every definition names a figure."""

from __future__ import annotations

import pytest

from killpoint.reports.definitions import METRICS, definition
from killpoint.reports.metrics import CampaignMetrics

# figures the report shows that are not fields of CampaignMetrics, or are split from one field
REPORT_ONLY = {
    "unknown",
    "recovery_time_clock",
    "recovery_time_wall",
    "recovery_steps",
    "storage_per_workflow",
    "storage_per_step",
    "runs_per_s",  # drawn across builds only (`reports.trend_charts`)
}
# fields that are parts of a figure defined under another key
PARTS = {
    "recovery_time",
    "storage",
    "runs_with_migration_failures",
    "expected_migration_failures",
    "expected_needs_review",
    "within_budget_pct",
}


def test_every_metric_field_has_a_definition_and_every_definition_a_figure() -> None:
    keys = [d.key for d in METRICS]
    assert len(keys) == len(set(keys))
    fields = set(CampaignMetrics.model_fields) | set(CampaignMetrics.model_computed_fields)
    assert fields - PARTS - set(keys) == set()
    assert set(keys) - fields == REPORT_ONLY


def test_an_unknown_key_names_the_known_ones() -> None:
    assert definition("needs_review").title == "needs review"
    with pytest.raises(KeyError, match="known: runs, violations"):
        definition("uptime")
