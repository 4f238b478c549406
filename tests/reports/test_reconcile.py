"""The page's figures reconcile with the JSON summary (`killpoint run --json`): same counts, the
same percentage on a tile and in the table, each within rounding of the JSON's exact value; the
same mutants, checkers, runs to detection and schedule files; the same catches a test expected."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from killpoint.harness.results import CampaignResult
from killpoint.reports.figures import percent
from killpoint.reports.html import render_html
from killpoint.reports.metrics import summary_json
from tests.support.campaigns import with_a_catch_as_expected
from tests.support.metrics import with_run_measures

RATES = {
    "resume": "resume_success",
    "duplicates": "duplicate_effects",
    "review": "needs_review",
    "budget": "within_budget",
}


def _tile(html: str, tile: str) -> tuple[str, str]:
    found = re.search(
        rf'id="tile-{tile}"[^>]*>\s*<div class="tile-value">([^<]*)</div>\s*'
        r'<div class="tile-label">[^<]*</div>\s*<div class="tile-detail">([^<]*)</div>',
        html,
    )
    assert found, tile
    return found.group(1), found.group(2)


def _row(html: str, row: str) -> tuple[str, str]:
    found = re.search(rf'<tr id="row-{row}"><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)', html)
    assert found, row
    return found.group(1), found.group(2)


def _rows(html: str, row_class: str) -> list[list[str]]:
    """The text of each cell of each `<tr class="ROW_CLASS …">`."""
    rows = re.findall(rf'<tr class="{row_class}[^"]*">(.*?)</tr>', html, re.S)
    return [
        [" ".join(unescape(re.sub(r"<[^>]+>", " ", c)).split()) for c in cells]
        for cells in (re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows)
    ]


def _reconcile_mutants(html: str, summary: dict[str, Any]) -> None:
    score = summary["metrics"]["mutation_score"]
    if score is not None:
        assert _tile(html, "mutation")[1] == f"{score['count']} of {score['of']}"
    rows = _rows(html, "mutant")
    assert len(rows) == len(summary["mutants"])
    for row, mutant in zip(rows, summary["mutants"], strict=True):
        assert row[0].startswith(mutant["mutant"])
        assert row[1] == ("caught" if mutant["caught"] else "MISSED")
        assert row[2] == (mutant["checker"] or "—")
        assert row[3] == str(mutant["runs_to_detection"] or "—")
    # the page carries each schedule under the name the campaign saved it as
    files = [Path(m["schedule_file"]).name for m in summary["mutants"] if m["schedule_file"]]
    links = re.findall(r'<details class="catch mutant-catch".*?</details>', html, re.S)
    assert [re.findall(r"killpoint replay (\S+)", d) for d in links] == [[f] for f in files]
    expected = _rows(html, "expected-catch")
    assert len(expected) == len(summary["caught_as_expected"])
    for row, catch in zip(expected, summary["caught_as_expected"], strict=True):
        assert row[0] == catch["test"] and row[1] == catch["engine"]
        assert row[3] == f"{catch['violating']} of {catch['runs']}"
        assert row[4] == " · ".join(f"{c} {n}" for c, n in catch["checkers"].items())


def _parsed(figure: str) -> float:
    return float(figure.strip("<>%"))


def _reconcile(campaign: CampaignResult) -> None:
    html = render_html(campaign)
    summary = json.loads(json.dumps(summary_json(campaign)))
    metrics = summary["metrics"]
    assert _tile(html, "runs")[0] == str(summary["runs"])
    assert _tile(html, "violations")[0] == str(len({v["run_id"] for v in summary["violations"]}))
    for tile, key in RATES.items():
        rate = metrics[key]
        tile_value, tile_detail = _tile(html, tile)
        row_value, row_detail = _row(html, tile)
        assert tile_value == row_value, tile  # one rounding
        assert tile_detail.startswith(f"{rate['count']} of {rate['of']}"), tile
        assert row_detail.startswith(f"{rate['count']} of {rate['of']}"), tile
        if rate["value"] is None:
            assert tile_value == "n/a"
        else:
            assert _parsed(tile_value) == pytest.approx(100 * rate["value"], abs=0.1), tile
    coverage = metrics["coverage"]
    assert _tile(html, "coverage")[1] == f"{coverage['crashed']} of {coverage['discovered']}"
    _reconcile_mutants(html, summary)


def test_the_page_reconciles_with_the_json_summary(campaign: CampaignResult) -> None:
    _reconcile(campaign)


def test_a_rate_that_needs_rounding_reads_the_same_on_tile_and_table(
    campaign: CampaignResult,
) -> None:
    runs = [
        r.model_copy(update={"run_id": f"{r.run_id}-{i}"}) for i in range(3) for r in campaign.runs
    ]  # 24 runs, 3 duplicates: 12.5 %; then one more duplicate: 4/24 = 16.666… %
    many = campaign.model_copy(update={"runs": runs})
    many = with_run_measures(many, "r0-0", duplicate_effects=1)
    html = render_html(many)
    assert _tile(html, "duplicates")[0] == _row(html, "duplicates")[0] == "16.7%"
    _reconcile(many)


def test_the_mutants_and_the_catches_a_test_expected_reconcile_with_the_json_summary(
    campaign: CampaignResult,
) -> None:
    with_catch = with_a_catch_as_expected(campaign)
    assert summary_json(with_catch)["caught_as_expected"]
    _reconcile(with_catch)


def test_an_empty_campaign_reconciles_as_not_measured(empty: CampaignResult) -> None:
    _reconcile(empty)


def test_a_percentage_is_never_rounded_onto_an_edge() -> None:
    assert [percent(v) for v in (None, 0.0, 1.0, 0.0674, 0.9997, 0.0002)] == [
        "n/a",
        "0%",
        "100%",
        "6.7%",
        ">99.9%",
        "<0.1%",
    ]
