"""Recovery metrics and the HTML and JUnit reports of a campaign.

Reports read `harness.results.CampaignResult` only; nothing here runs an engine. `write_atomic`
is how every result file is written (a reader never sees half of one), so the CLI writes its
JSON through it too.
"""

if __name__ != "killpoint.reports":  # a checkout's folder, imported by its bare name
    raise ImportError(
        "import killpoint.reports, not reports: the folder installs under killpoint, "
        "and a second name would load a second copy of every module"
    )

from killpoint.reports._atomic import write_atomic
from killpoint.reports.figures import percent
from killpoint.reports.html import render_html, write_html
from killpoint.reports.junit import write_junit
from killpoint.reports.metrics import CampaignMetrics, campaign_metrics, summary_json

__all__ = [
    "CampaignMetrics",
    "campaign_metrics",
    "percent",
    "render_html",
    "summary_json",
    "write_atomic",
    "write_html",
    "write_junit",
]
