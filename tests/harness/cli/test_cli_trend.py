"""`--trend FILE` on `run` and `merge`: one record a build appended, drawn in the report; a bad
history refused before any work, and never rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from killpoint.reports.trends import read_trend
from tests.support.dom import Census, section_of
from tests.support.small_runs import CAUGHT, PASSING, cli


def test_each_build_appends_its_figures_and_the_report_draws_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    history = ["--trend", "ci/trend.jsonl", "--report", "report.html"]
    code, out, _ = cli(*PASSING, *history)
    assert code == 0 and "trend: ci/trend.jsonl" in out
    code, out, _ = cli(*CAUGHT, *history)
    assert code == 1

    passing, caught = read_trend(tmp_path / "ci" / "trend.jsonl")
    assert (passing.violations, caught.violations) == (0, 2)
    assert caught.engine == "fresh_idempotency_key_on_resume" and caught.runs > 0
    assert caught.duplicate_effect_rate is not None and caught.duplicate_effect_rate > 0
    trends = Census(section_of((tmp_path / "report.html").read_text(), "trends"))
    drawn = trends.by_id("trend-violations")
    assert drawn is not None
    values = [float(e.attrs["data-value"]) for e in trends.by_class("trend-point")]
    assert values[:2] == [0, 2]


def test_a_malformed_history_fails_before_the_campaign_and_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    history = tmp_path / "trend.jsonl"
    history.write_text('{"version": 1}\n')
    code, _, err = cli(*PASSING, "--trend", "trend.jsonl", "--workdir", "work")
    assert code == 2
    assert (
        err == "killpoint: trend.jsonl:1: not a killpoint trend record (when: Field required); "
        "fix or remove the line, the file is never rewritten\n"
    )
    assert history.read_text() == '{"version": 1}\n'
    assert not (tmp_path / "work").exists()  # no campaign ran


def test_a_shard_leaves_the_trend_to_merge_which_appends_one_record_for_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(*PASSING, "--shard", "1/2", "--trend", "trend.jsonl")
    assert code == 2 and "--trend records a whole build: give it to `merge`" in err
    for shard in ("1/2", "2/2"):
        code, out, _ = cli(*PASSING, "--shard", shard, "--out", f"shard{shard[0]}.json")
        assert code == 0, out
    merge = ["merge", "shard1.json", "shard2.json", "--out", "merged.json"]
    code, out, _ = cli(*merge, "--trend", "trend.jsonl")
    assert code == 0, out
    [record] = read_trend(tmp_path / "trend.jsonl")
    assert record.runs == len(json.loads(Path("merged.json").read_text())["runs"])
