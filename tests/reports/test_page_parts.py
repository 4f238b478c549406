"""The parts of the page a reader of a red CI job asks for: the per-run table's rows, every
metric's definition, each worker's end with its reason, and in the header what produced the
report (killpoint's and the engine's versions, the command line)."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

from killpoint.harness.results import CampaignResult
from killpoint.reports.definitions import METRICS
from killpoint.reports.html import render_html
from killpoint.reports.run_rows import ROW_FIELDS, run_rows
from tests.support.campaigns import doubtful_campaign
from tests.support.dom import Census, section_of


def _rows(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', html)
    assert found
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def _decoded(data: dict[str, Any]) -> list[dict[str, object]]:
    """The rows as the page's script reads them."""
    fields, values, columns = data["fields"], data["values"], data["columns"]

    def cell(field: str, i: int) -> object:
        column = columns[field]
        raw = int(column[i], 36) if isinstance(column, str) else column[i]
        if field in values:
            return values[field][raw]
        return raw / 100 if field == "seconds" and raw is not None else raw

    return [{f: cell(f, i) for f in fields} for i in range(len(columns["run"]))]


def test_every_run_is_a_row_with_its_phase_verdict_and_first_objecting_checker() -> None:
    campaign = doubtful_campaign()
    rows = _decoded(_rows(render_html(campaign)))
    assert [r["run"] for r in rows] == [r.run_id for r in campaign.runs]
    assert list(rows[0]) == list(ROW_FIELDS)
    by_id = {r["run"]: r for r in rows}
    assert by_id["r7"] | {"seconds": None} == {
        "run": "r7",
        "scenario": "order_saga",
        "phase": "single",
        "verdict": "violation",
        "checker": "single_effect",
        "status": "completed",
        "workers": 2,
        "deaths": 1,
        "seconds": None,
    }
    assert (by_id["p2"]["verdict"], by_id["p2"]["checker"]) == ("unknown", "progress")
    assert (by_id["q1"]["verdict"], by_id["q1"]["checker"], by_id["q1"]["status"]) == (
        "valid",
        "",
        "quarantined",
    )


def test_a_run_measured_wall_time_is_its_duration() -> None:
    campaign = doubtful_campaign()
    first = campaign.runs[0]
    timed = first.model_copy(
        update={"measures": first.measures.model_copy(update={"wall_s": 0.1234})}
    )
    rows = _decoded(json.loads(run_rows(campaign.model_copy(update={"runs": [timed]}))))
    assert rows[0]["seconds"] == 0.12


def test_small_numbers_are_a_digit_a_run_and_larger_ones_a_list() -> None:
    campaign = doubtful_campaign()
    many = campaign.runs[0].measures.model_copy(update={"workers": 40})
    runs = [campaign.runs[0].model_copy(update={"measures": many}), *campaign.runs[1:]]
    data = json.loads(run_rows(campaign.model_copy(update={"runs": runs})))
    assert data["columns"]["deaths"] == "0111001211"  # a base-36 digit a run
    assert data["columns"]["workers"][0] == 40 and isinstance(data["columns"]["workers"], list)
    assert _decoded(data)[0]["workers"] == 40


def test_engine_text_cannot_close_the_rows_script() -> None:
    campaign = doubtful_campaign()
    nasty = campaign.runs[0].model_copy(update={"run_id": "</script><b>x"})
    html = render_html(campaign.model_copy(update={"runs": [nasty]}))
    assert "</script><b>" not in html
    assert _decoded(_rows(html))[0]["run"] == "</script><b>x"


def test_without_script_the_page_says_where_every_run_is_and_hides_nothing_else() -> None:
    html = render_html(doubtful_campaign())
    runs = section_of(html, "runs")
    assert "<noscript>" in runs and "JSON result" in runs
    hidden = [e for e in Census(html).elements if "hidden" in e.attrs]
    assert [e.attrs.get("id") for e in hidden] == ["run-filters"]  # empty until the script fills it


def test_every_definition_is_on_the_page() -> None:
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", render_html(doubtful_campaign()))).split())
    for d in METRICS:
        assert " ".join(d.meaning.split()) in text, d.key
    unresolved = re.search(r'<tr id="row-unresolved">.*?</tr>', render_html(doubtful_campaign()))
    assert unresolved and "over the 2 runs that ended with an unresolved effect" in unresolved[0]


def test_each_worker_end_is_on_the_page_with_its_reason(campaign: CampaignResult) -> None:
    violations = section_of(render_html(campaign), "violations")
    ends = re.search(r'<ul class="worker-ends small">(.*?)</ul>', violations)
    assert ends is not None
    assert re.findall(r"<li>([^<]*)</li>", ends.group(1)) == [
        "w0 killed: killed at w0 charge:transport.response_received",
        "w1 stopped → completed",
    ]


def test_the_header_names_the_versions_and_the_command_line() -> None:
    stamped = doubtful_campaign().model_copy(
        update={
            "killpoint_version": "0.1.0",
            "engine_version": "my-engine 2.3",
            "command": ["killpoint", "run", "--engine", "my_engine:factory", "-s", "order saga"],
        }
    )
    header = re.search(r"<header.*?</header>", render_html(stamped), re.S)
    assert header is not None
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", header[0])).split())
    assert "engine reference (my-engine 2.3)" in text
    assert "killpoint 0.1.0" in text
    assert "command killpoint run --engine my_engine:factory -s 'order saga'" in text


def test_an_older_result_without_them_leaves_them_out() -> None:
    header = re.search(r"<header.*?</header>", render_html(doubtful_campaign()), re.S)
    assert header is not None
    assert 'id="command"' not in header[0] and 'id="killpoint-version"' not in header[0]
