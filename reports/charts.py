"""Chart geometry for the report: a histogram and a scatter, drawn by the template as inline SVG.

The report must open anywhere, offline, from a CI artifact, so it cannot load a charting
library; the few shapes it needs are computed here (pure, testable) and the template only draws
them. Dots at the same point are merged and sized by count, so a campaign of thousands of runs
draws a few dozen shapes, not thousands.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

WIDTH = 420.0
HEIGHT = 230.0
LEFT, RIGHT, TOP, BOTTOM = 52.0, 14.0, 12.0, 40.0
MAX_BINS = 12
LOG_SPAN = 100.0  # a largest value this many times the smallest positive one gets decade bins
CLIP_AT = 95  # a heavy tail is cut at this percentile, its runs counted in one overflow bar
PIXEL = 3.0  # runs whose dots would fall this close together are drawn as one
CLIP_SPAN = 3.0  # ... when the largest value is more than this many times that percentile


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    title: str
    count: int = 0

    def __post_init__(self) -> None:
        """Tenths of a pixel: long decimals would make most of a chart's markup."""
        for name in ("x", "y", "width", "height"):
            object.__setattr__(self, name, round(getattr(self, name), 1))


@dataclass(frozen=True)
class Dot:
    cx: float
    cy: float
    r: float
    title: str


@dataclass(frozen=True)
class Tick:
    pos: float
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "pos", round(self.pos, 1))


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    x_label: str
    y_label: str
    width: float = WIDTH
    height: float = HEIGHT
    bars: list[Bar] = field(default_factory=list)
    dots: list[Dot] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    empty: str | None = None  # shown instead of a plot when there is nothing to draw
    log_x: bool = False  # bins are decades: a long tail is not squeezed into one bar
    overflow: int = 0  # runs past the clipped range, drawn as the last bar (`clipped`)
    note: str | None = None  # e.g. the percentiles, shown under the plot

    @property
    def plot(self) -> tuple[float, float, float, float]:
        return LEFT, TOP, self.width - RIGHT, self.height - BOTTOM


def fmt(value: float) -> str:
    """A short number: whole from 100 up (with separators), else at most three significant."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 100 or value == int(value):
        return f"{round(value):,}"
    return f"{value:.3g}"


def _bins(values: list[float]) -> list[tuple[float, float, int]]:
    lo, hi = min(values), max(values)
    if hi == lo:
        return [(lo, hi, len(values))]
    if all(v == int(v) for v in values) and hi - lo < MAX_BINS * 2:
        edges = [lo + i for i in range(int(hi - lo) + 2)]
        width = 1.0
    else:
        count = min(MAX_BINS, max(1, math.ceil(math.sqrt(len(values)))))
        width = (hi - lo) / count or 1.0
        edges = [lo + i * width for i in range(count + 1)]
    counts = Counter(min(len(edges) - 2, int((v - lo) / width)) for v in values)
    return [(edges[i], edges[i + 1], counts.get(i, 0)) for i in range(len(edges) - 1)]


def _log_bins(values: list[float]) -> list[tuple[float, float, int]] | None:
    """Decade bins (a bar for zero first) when the values span LOG_SPAN or more; else None."""
    positive = [v for v in values if v > 0]
    if len(positive) != len([v for v in values if v != 0]) or not positive:
        return None  # negative values: no log axis
    lo, hi = min(positive), max(positive)
    if hi < lo * LOG_SPAN:
        return None
    first, last = math.floor(math.log10(lo)), math.floor(math.log10(hi))
    counts = Counter(min(last, max(first, math.floor(math.log10(v)))) for v in positive)
    bins = [(10.0**k, 10.0 ** (k + 1), counts.get(k, 0)) for k in range(first, last + 1)]
    zeros = len(values) - len(positive)
    return ([(0.0, 0.0, zeros)] if zeros else []) + bins


def _y_ticks(top_value: float, y0: float, y1: float) -> list[Tick]:
    return [Tick(y1 - (y1 - y0) * frac, fmt(top_value * frac)) for frac in (0.0, 0.5, 1.0)]


def clipped(values: list[float]) -> tuple[list[float], float | None]:
    """The body of a heavy-tailed distribution and where it was cut: a few clock jumps of an
    hour must not squeeze every other run into the first bar. Cut at the CLIP_AT percentile
    when the largest value is more than CLIP_SPAN times it; else (values, None)."""
    ordered = sorted(values)
    cut = ordered[max(1, math.ceil(CLIP_AT / 100 * len(ordered))) - 1]
    if cut <= ordered[0] or ordered[-1] <= CLIP_SPAN * cut:
        return values, None
    return [v for v in values if v <= cut], cut


def histogram(chart_id: str, title: str, values: list[float], x_label: str) -> Chart:
    """Bars of `values`: linear bins; a heavy tail clipped (`clipped`) into an overflow bar
    "> X: N runs"; else decade bins when the values span LOG_SPAN or more."""
    chart = Chart(id=chart_id, title=title, x_label=x_label, y_label="runs")
    if not values:
        return replace(chart, empty="no runs were measured")
    body, cut = clipped(values)
    if cut is not None:
        return _with_overflow(
            histogram(chart_id, title, body, x_label), cut, len(values) - len(body)
        )
    log_bins = _log_bins(values)
    bins = log_bins or _bins(values)
    x0, y0, x1, y1 = chart.plot
    slot = (x1 - x0) / len(bins)
    top = max(count for _, _, count in bins)
    integer = (
        not log_bins
        and len(bins) > 1
        and bins[0][1] - bins[0][0] == 1.0
        and all(v == int(v) for v in values)
    )
    bars = [
        Bar(
            x=x0 + i * slot + 1,
            width=max(slot - 2, 1.0),
            y=y1 - (y1 - y0) * count / top,
            height=(y1 - y0) * count / top,
            title=f"{fmt(lo) if integer or lo == hi else f'{fmt(lo)} to {fmt(hi)}'}: {count} runs",
            count=count,
        )
        for i, (lo, hi, count) in enumerate(bins)
    ]
    if log_bins:
        x_ticks = [
            Tick(x0 + i * slot + (slot / 2 if lo == hi else 0), fmt(lo))
            for i, (lo, hi, _) in enumerate(bins)
        ]
        x_ticks.append(Tick(x1, fmt(bins[-1][1])))
        chart = replace(chart, log_x=True, x_label=f"{chart.x_label} (log scale)")
    elif integer:
        x_ticks = [Tick(x0 + (i + 0.5) * slot, fmt(lo)) for i, (lo, _, _) in enumerate(bins)]
        if len(x_ticks) > 8:
            x_ticks = x_ticks[:: math.ceil(len(x_ticks) / 8)]
    else:
        x_ticks = [Tick(x0, fmt(bins[0][0])), Tick(x1, fmt(bins[-1][1]))]
        if len(bins) > 2:
            x_ticks.insert(1, Tick((x0 + x1) / 2, fmt((bins[0][0] + bins[-1][1]) / 2)))
    return replace(chart, bars=bars, x_ticks=x_ticks, y_ticks=_y_ticks(top, y0, y1))


def _with_overflow(chart: Chart, cut: float, count: int) -> Chart:
    """`chart` narrowed to make room for one more bar on the right: the runs past `cut`."""
    x0, y0, x1, y1 = chart.plot
    slot = (x1 - x0) / (len(chart.bars) + 1)
    scale = (x1 - slot - x0) / (x1 - x0)
    top = max([count] + [b.count for b in chart.bars])
    bars = [
        replace(
            b,
            x=x0 + (b.x - x0) * scale,
            width=max(b.width * scale, 1.0),
            y=y1 - (y1 - y0) * b.count / top,
            height=(y1 - y0) * b.count / top,
        )
        for b in chart.bars
    ]
    height = (y1 - y0) * count / top
    label = f"> {fmt(cut)}"
    overflow = Bar(x1 - slot + 1, y1 - height, max(slot - 2, 1.0), height, f"{label}: {count} runs")
    bars.append(replace(overflow, count=count))
    # the body's last tick is the cut, which the overflow bar's own label names
    ticks = [replace(t, pos=x0 + (t.pos - x0) * scale) for t in chart.x_ticks[:-1]]
    return replace(
        chart,
        bars=bars,
        x_ticks=[*ticks, Tick(x1 - slot / 2, label)],
        y_ticks=_y_ticks(top, y0, y1),
        overflow=count,
    )


def scatter(
    chart_id: str, title: str, points: list[tuple[int, int]], x_label: str, y_label: str
) -> Chart:
    """Runs by (steps, store bytes); runs that fall on the same pixel (PIXEL) are one dot,
    sized by their count: thousands of runs, a few dozen dots."""
    chart = Chart(id=chart_id, title=title, x_label=x_label, y_label=y_label)
    if not points:
        return replace(chart, empty="no runs were measured")
    x_top = max(max(p[0] for p in points), 1)
    y_top = max(max(p[1] for p in points), 1)
    x0, y0, x1, y1 = chart.plot
    cells: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for steps, size in points:
        cx, cy = x0 + (x1 - x0) * steps / x_top, y1 - (y1 - y0) * size / y_top
        cells.setdefault((round(cx / PIXEL), round(cy / PIXEL)), []).append((steps, size))
    biggest = max(map(len, cells.values()))
    dots = []
    for cell in sorted(cells.values()):
        steps, sizes, n = cell[0][0], sorted(size for _, size in cell), len(cell)
        shown = f"{sizes[0]:,}" if sizes[0] == sizes[-1] else f"{sizes[0]:,} to {sizes[-1]:,}"
        dots.append(
            Dot(
                cx=round(x0 + (x1 - x0) * steps / x_top, 1),
                cy=round(y1 - (y1 - y0) * sizes[n // 2] / y_top, 1),
                r=round(3.0 + 5.0 * math.sqrt(n / biggest), 1) if biggest > 1 else 3.5,
                title=f"{steps} steps, {shown} bytes: {n} run{'s' if n > 1 else ''}",
            )
        )
    x_ticks = [Tick(x0 + (x1 - x0) * f, fmt(x_top * f)) for f in (0.0, 0.5, 1.0)]
    return replace(chart, dots=dots, x_ticks=x_ticks, y_ticks=_y_ticks(y_top, y0, y1))
