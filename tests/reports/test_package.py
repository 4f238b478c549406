"""The public names of `reports`, pinned so a rename is a deliberate change."""

from __future__ import annotations

from killpoint import reports


def test_exported_names() -> None:
    assert sorted(reports.__all__) == [
        "CampaignMetrics",
        "campaign_metrics",
        "percent",
        "render_html",
        "summary_json",
        "write_atomic",
        "write_html",
        "write_junit",
    ]
    for name in reports.__all__:
        assert getattr(reports, name) is not None
