"""The trend history (`reports.trends`): one record a build, appended, read back whole, a bad
line named; and the report's Trends charts (`reports.trend_charts`), drawn from the records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from killpoint.contract.errors import KillpointError
from killpoint.harness.results import CampaignResult
from killpoint.reports.charts import fmt
from killpoint.reports.definitions import definition
from killpoint.reports.html import render_html
from killpoint.reports.trend_charts import BOTTOM, HEIGHT, LAST_BUILDS, TOP, trend_chart, trends
from killpoint.reports.trends import (
    TrendRecord,
    append_trend,
    build_commit,
    read_trend,
    trend_record,
)
from tests.support.dom import Census, section_of

START = datetime(2026, 12, 1, tzinfo=UTC)


def _record(day: int, **figures: Any) -> TrendRecord:
    values: dict[str, Any] = {
        "when": START + timedelta(days=day),
        "killpoint": "0.1.0",
        "engine": "mine",
        "commit": f"{day:07d}abcdef",
        "runs": 100,
        "violations": 0,
        "unknown": 0,
        "duplicate_effect_rate": 0.0,
        "needs_review_rate": 0.0,
        "mutants_caught": 0,
        "mutants_hunted": 0,
        "wall_s": 10.0,
    }
    return TrendRecord(**(values | figures))


def test_a_campaigns_record_carries_its_figures(campaign: CampaignResult) -> None:
    record = trend_record(campaign, commit="abc123")
    assert (record.engine, record.commit, record.runs) == ("reference", "abc123", 8)
    assert (record.violations, record.unknown) == (1, 1)
    assert record.duplicate_effect_rate == record.needs_review_rate == 1 / 8
    assert (record.mutants_caught, record.mutants_hunted, record.power) == (2, 3, 2 / 3)
    assert record.runs_per_s == 8 / campaign.duration_s


def test_records_appended_read_back_in_order_one_line_each(tmp_path: Path) -> None:
    path = tmp_path / "ci" / "trend.jsonl"
    assert read_trend(path) == []  # no history yet: the first build starts it
    first, second = _record(0, violations=3), _record(1, mutants_caught=4, mutants_hunted=5)
    append_trend(path, first)
    assert append_trend(path, second) == [first, second]
    assert read_trend(path) == [first, second]
    assert len(path.read_text().splitlines()) == 2


def test_a_last_line_without_a_newline_is_not_joined_to_the_next(tmp_path: Path) -> None:
    path = tmp_path / "trend.jsonl"
    path.write_text(_record(0).model_dump_json() + "\n\n" + _record(1).model_dump_json())
    append_trend(path, _record(2))
    assert [r.when.day for r in read_trend(path)] == [1, 2, 3]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("not json at all", "not JSON"),
        ('{"version": 1, "when": "2026-12-01T00:00:00Z"}', "killpoint: Field required"),
        (_record(0).model_dump_json().replace('"runs":100', '"runs":-1'), "runs: Input should"),
    ],
)
def test_a_malformed_line_is_one_error_naming_the_file_and_line_and_is_left_alone(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = tmp_path / "trend.jsonl"
    path.write_text(_record(0).model_dump_json() + "\n" + line + "\n")
    before = path.read_bytes()
    with pytest.raises(KillpointError) as raised:
        append_trend(path, _record(1))
    message = str(raised.value)
    assert message.startswith(f"{path}:2: not a killpoint trend record ({reason}")
    assert "\n" not in message
    assert path.read_bytes() == before  # never rewritten, nothing appended


def test_a_later_killpoints_fields_are_read_past(tmp_path: Path) -> None:
    path = tmp_path / "trend.jsonl"
    path.write_text(_record(0).model_dump_json()[:-1] + ', "shiny": 1}\n')
    assert read_trend(path) == [_record(0)]


def test_the_commit_is_the_cis_else_none_outside_a_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    monkeypatch.setenv("CI_COMMIT_SHA", "gitlab123")
    assert build_commit() == "gitlab123"
    monkeypatch.setenv("GITHUB_SHA", "github456")
    assert build_commit() == "github456"
    monkeypatch.delenv("GITHUB_SHA")
    monkeypatch.delenv("CI_COMMIT_SHA")
    monkeypatch.chdir(tmp_path)  # no repository here
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert build_commit() is None
    monkeypatch.setenv("PATH", str(tmp_path))  # no git at all
    assert build_commit() is None


def test_each_point_is_its_builds_figure_and_a_build_without_one_breaks_the_line() -> None:
    records = [
        _record(0, violations=0, mutants_caught=1, mutants_hunted=2),
        _record(1, violations=2),  # no mutants hunted: no power
        _record(2, violations=4, mutants_caught=2, mutants_hunted=2),
    ]
    bottom, top = HEIGHT - BOTTOM, TOP
    violations = trend_chart("v", "Violations", records, lambda r: float(r.violations), fmt)
    assert [p.value for p in violations.points] == [0, 2, 4]
    assert [p.y for p in violations.points] == [bottom, (bottom + top) / 2, top]
    xs = [p.x for p in violations.points]
    assert xs[0] < xs[1] < xs[2] and xs[1] - xs[0] == xs[2] - xs[1]
    assert violations.path.count("M") == 1 and violations.path.count("L") == 2
    assert violations.points[1].title == "2026-12-02 0000001: 2"
    assert violations.latest == "4"

    power = trend_chart("p", "Power", records, lambda r: r.power, fmt)
    assert [p.value for p in power.points] == [0.5, 1.0]
    assert [p.x for p in power.points] == [xs[0], xs[2]]  # the same builds' places
    assert power.path.count("M") == 2 and "L" not in power.path  # a gap, not a zero
    assert trend_chart("p", "Power", records[:2], lambda r: r.power, fmt).latest is None


def test_the_charts_draw_the_last_builds_only() -> None:
    records = [_record(day, violations=day) for day in range(LAST_BUILDS + 5)]
    shown = trends(records, Path("ci") / "trend.jsonl")
    assert (shown.source, shown.builds) == ("trend.jsonl", LAST_BUILDS)
    by_id = {c.id: c for c in shown.charts}
    assert list(by_id) == ["violations", "duplicates", "review", "power", "speed"]
    assert [p.value for p in by_id["violations"].points] == list(range(5, LAST_BUILDS + 5))
    assert [p.value for p in by_id["speed"].points] == [10.0] * LAST_BUILDS
    assert by_id["power"].empty == "no build measured it"
    assert by_id["speed"].meaning == definition("runs_per_s").meaning  # said on the page


def test_the_report_shows_trends_only_when_given_a_history(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    path = tmp_path / "trend.jsonl"
    for day, violations in enumerate((5, 1, 0)):
        append_trend(
            path, _record(day, violations=violations, mutants_caught=day, mutants_hunted=2)
        )
    assert Census(render_html(campaign)).by_id("trends") is None

    section = Census(section_of(render_html(campaign, trend=path), "trends"))
    charts = [e.attrs["id"] for e in section.elements if e.tag == "figure"]
    assert charts == [
        f"trend-{c}" for c in ("violations", "duplicates", "review", "power", "speed")
    ]
    points = [e for e in section.by_class("trend-point")]
    assert [float(p.attrs["data-value"]) for p in points[:3]] == [5, 1, 0]  # violations
    assert [float(p.attrs["data-value"]) for p in points[9:12]] == [0, 0.5, 1]  # power
    assert len(section.by_class("trend-line")) == 5
