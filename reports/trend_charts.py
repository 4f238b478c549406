"""The report's Trends: a few figures of the last builds as small line charts, one point a build.

Drawn like the report's other charts (`reports.charts`): geometry computed here, inline SVG laid
out by the template (`templates/trends.html.j2`), no script, nothing fetched. A build without a
figure (no mutants hunted, so no power) leaves a gap in its line rather than a zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from killpoint.reports.charts import Tick, fmt
from killpoint.reports.definitions import definition
from killpoint.reports.figures import percent
from killpoint.reports.trends import TrendRecord

LAST_BUILDS = 30
WIDTH, HEIGHT = 300.0, 150.0
LEFT, RIGHT, TOP, BOTTOM = 46.0, 12.0, 10.0, 28.0


@dataclass(frozen=True)
class TrendPoint:
    x: float
    y: float
    value: float
    title: str  # the build and its figure, shown on hover


@dataclass(frozen=True)
class TrendChart:
    id: str
    title: str
    points: list[TrendPoint]
    path: str  # the SVG path through the points, broken where a build has no figure
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    latest: str | None = None  # the last build's figure, beside the title
    meaning: str = ""  # its definition (`reports.definitions`), under the chart
    width: float = WIDTH
    height: float = HEIGHT
    empty: str | None = None

    @property
    def plot(self) -> tuple[float, float, float, float]:
        return LEFT, TOP, self.width - RIGHT, self.height - BOTTOM


@dataclass(frozen=True)
class Trends:
    source: str  # the history file's name
    builds: int  # the builds drawn (the last LAST_BUILDS of the file)
    charts: list[TrendChart] = field(default_factory=list)


Figure = Callable[[TrendRecord], float | None]
# (chart id, title, its definition's key, the figure of a build, how a value is printed)
FIGURES: list[tuple[str, str, str, Figure, Callable[[float], str]]] = [
    ("violations", "Violations", "violations", lambda r: float(r.violations), fmt),
    (
        "duplicates",
        "Duplicate-effect rate",
        "duplicate_effects",
        lambda r: r.duplicate_effect_rate,
        percent,
    ),
    ("review", "Needs-review rate", "needs_review", lambda r: r.needs_review_rate, percent),
    ("power", "Power (mutants caught)", "mutation_score", lambda r: r.power, percent),
    ("speed", "Runs per second", "runs_per_s", lambda r: r.runs_per_s, fmt),
]


def day(record: TrendRecord) -> str:
    return record.when.strftime("%Y-%m-%d")


def build_label(record: TrendRecord) -> str:
    """`2026-12-08 1a79349`: the day and the short commit, when there is one."""
    return f"{day(record)} {record.commit[:7]}" if record.commit else day(record)


def trend_chart(
    chart_id: str,
    title: str,
    records: Sequence[TrendRecord],
    figure: Figure,
    show: Callable[[float], str],
) -> TrendChart:
    x0, y0, x1, y1 = LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM
    values = [figure(r) for r in records]
    known = [v for v in values if v is not None]
    if not known:
        return TrendChart(chart_id, title, [], "", [], [], empty="no build measured it")
    top = max(known) or 1.0
    step = (x1 - x0) / (len(records) - 1) if len(records) > 1 else 0.0
    points, path, pen_down = [], [], False
    for i, (record, value) in enumerate(zip(records, values, strict=True)):
        if value is None:
            pen_down = False
            continue
        x = x0 + i * step if len(records) > 1 else (x0 + x1) / 2
        y = y1 - (y1 - y0) * value / top
        points.append(TrendPoint(x, y, value, f"{build_label(record)}: {show(value)}"))
        path.append(f"{'L' if pen_down else 'M'}{x:.1f} {y:.1f}")
        pen_down = True
    y_ticks = [Tick(y1, show(0.0)), Tick(y0, show(top))]
    x_ticks = [Tick(x0, day(records[0]))]
    if len(records) > 1:
        x_ticks.append(Tick(x1, day(records[-1])))
    latest = None if values[-1] is None else show(values[-1])
    return TrendChart(chart_id, title, points, " ".join(path), y_ticks, x_ticks, latest)


def trends(records: Sequence[TrendRecord], source: str | Path) -> Trends:
    """The charts of the last LAST_BUILDS builds of a history file."""
    last = list(records)[-LAST_BUILDS:]
    return Trends(
        source=Path(source).name,
        builds=len(last),
        charts=[
            replace(trend_chart(i, t, last, f, show), meaning=definition(key).meaning)
            for i, t, key, f, show in FIGURES
        ],
    )
