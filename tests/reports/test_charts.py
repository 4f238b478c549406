"""Chart geometry: histogram bins, scatter merging, and an honest empty state."""

from __future__ import annotations

from killpoint.reports.charts import fmt, histogram, scatter


def test_integer_values_get_one_bin_per_integer() -> None:
    chart = histogram("h", "steps", [3.0, 4.0, 4.0, 6.0], "steps")
    assert len(chart.bars) == 4  # 3, 4, 5, 6
    heights = [round(b.height, 6) for b in chart.bars]
    assert heights[1] == max(heights) and heights[2] == 0


def test_continuous_values_are_binned_and_every_value_is_counted() -> None:
    values = [0.1 * i for i in range(100)]
    chart = histogram("h", "clock", values, "s")
    assert len(chart.bars) > 1
    assert len(chart.bars) <= 12
    assert sum(int(b.title.rsplit(": ", 1)[1].split()[0]) for b in chart.bars) == 100


def test_equal_values_make_one_bar() -> None:
    chart = histogram("h", "clock", [60.5, 60.5, 60.5], "s")
    assert len(chart.bars) == 1
    assert chart.bars[0].title.endswith("3 runs")


def test_no_values_give_an_empty_chart_with_a_reason() -> None:
    assert histogram("h", "t", [], "s").empty
    assert scatter("s", "t", [], "x", "y").empty


def test_scatter_merges_runs_at_the_same_point() -> None:
    chart = scatter("s", "growth", [(10, 4000)] * 50 + [(12, 5200)], "steps", "bytes")
    assert len(chart.dots) == 2
    big, small = sorted(chart.dots, key=lambda d: -d.r)
    assert big.r > small.r and "50 runs" in big.title


def test_numbers_are_short() -> None:
    assert fmt(3437.5) == "3,438"
    assert fmt(0.0123) == "0.0123"
    assert fmt(12.0) == "12"


def test_a_long_tail_gets_decade_bins_so_the_first_bar_does_not_swallow_the_rest() -> None:
    values = [60.0] * 3066 + [61.0, 130.0, 7200.0]
    chart = histogram("h", "clock", values, "s")
    assert chart.log_x and "log scale" in chart.x_label
    titles = [b.title for b in chart.bars]
    assert titles == ["10 to 100: 3067 runs", "100 to 1,000: 1 runs", "1,000 to 10,000: 1 runs"]


def test_zeros_get_their_own_bar_before_the_decades() -> None:
    chart = histogram("h", "clock", [0.0, 0.0, 2.0, 500.0], "s")
    assert chart.log_x
    assert chart.bars[0].title == "0: 2 runs"
    assert sum(int(b.title.rsplit(": ", 1)[1].split()[0]) for b in chart.bars) == 4


def test_a_narrow_range_stays_on_a_linear_axis() -> None:
    assert not histogram("h", "clock", [60.0, 61.0, 130.0], "s").log_x


def test_a_few_huge_values_are_clipped_into_an_overflow_bar_so_the_body_shows() -> None:
    """The issue's campaign: three clock jumps of an hour among runs that recovered in minutes
    squeezed 361 of 366 runs into the first bar."""
    values = [60.0] * 200 + [90.0] * 100 + [120.0] * 45 + [150.0] * 16 + [180.0] * 2 + [3601.0] * 3
    chart = histogram("h", "clock", values, "s")
    assert not chart.log_x
    *body, overflow = chart.bars
    assert overflow.title == "> 150: 5 runs" and chart.overflow == 5 == overflow.count
    assert sum(b.count for b in body) == 361
    assert len([b for b in body if b.count]) == 4  # 60, 90, 120 and 150 each a bar of its own
    assert [t.text for t in chart.x_ticks] == ["60", "105", "> 150"]
    assert overflow.x > max(b.x for b in body)


def test_values_close_to_their_95th_percentile_are_not_clipped() -> None:
    chart = histogram("h", "clock", [60.0] * 95 + [150.0] * 5, "s")
    assert chart.overflow == 0 and sum(b.count for b in chart.bars) == 100
