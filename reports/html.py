"""Render a campaign result as one self-contained HTML file, written atomically.

The page is opened from CI artifacts and laptops without network access, so everything is inline
(CSS, SVG) and nothing is fetched. Jinja2 escapes every value (labels and evidence come from
engines we do not own); the page model is built in `reports.view` and the template only lays
it out. The file is rendered fully in memory before the old one is replaced.
"""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from killpoint.harness.results import CampaignResult
from killpoint.reports._atomic import write_atomic
from killpoint.reports.charts import fmt
from killpoint.reports.definitions import METRICS
from killpoint.reports.figures import percent
from killpoint.reports.trend_charts import trends
from killpoint.reports.trends import read_trend
from killpoint.reports.view import IN_TABLE, OUTCOME_CLASSES, build_page

TEMPLATES = Path(__file__).parent / "templates"


def _seconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value >= 1 or value == 0:
        return f"{fmt(round(value, 1))} s"
    return f"{value * 1000:.0f} ms"


def _maybe(value: float | None, unit: str = "") -> str:
    return "n/a" if value is None else f"{fmt(round(value, 2))}{unit}"


def _compact(css: str) -> str:
    """The stylesheet without comments and runs of blanks: a few KB of every page."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return re.sub(r"\s*([{};])\s*|\s+", lambda m: m.group(1) or " ", css).strip()


def _compact_script(js: str) -> str:
    """The per-run table's script on one line, without its comments (every statement of it
    ends in `;` or `}`)."""
    js = re.sub(r"/\*.*?\*/", "", js, flags=re.S)
    return " ".join(line.strip() for line in js.splitlines() if line.strip())


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = fmt
    env.filters["seconds"] = _seconds
    env.filters["maybe"] = _maybe
    env.filters["pct"] = percent
    env.filters["compact"] = _compact
    env.filters["compact_script"] = _compact_script
    return env


def render_html(result: CampaignResult, trend: str | Path | None = None) -> str:
    """The page, carrying the schedules it shows: it replays wherever it is opened. With
    `trend`, a history file (`reports.trends`), it draws the last builds' figures too."""
    page = build_page(result)
    shown = None if trend is None else trends(read_trend(trend), trend)
    template = environment().get_template("report.html.j2")
    return template.render(
        page=page,
        r=result,
        m=page.metrics,
        outcomes=OUTCOME_CLASSES,
        trends=shown,
        defs={d.key: d for d in METRICS},
        in_table=IN_TABLE,
    )


def write_html(result: CampaignResult, path: str | Path, trend: str | Path | None = None) -> Path:
    """Render, then replace `path` in one step; a failed render leaves the old report intact."""
    return write_atomic(path, render_html(result, trend))
