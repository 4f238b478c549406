"""The HTML page: sections, counts, escaping, self-containment, and size on large campaigns."""

from __future__ import annotations

import re
from html import unescape

from killpoint.harness.results import CampaignResult, RunResult, Verdict, hunt_report
from killpoint.harness.schedule import FaultSchedule
from killpoint.reports.html import render_html
from killpoint.reports.view import build_page
from tests.support.campaigns import EXPECTING_TEST, with_a_catch_as_expected
from tests.support.carried import carried_files
from tests.support.dom import Census, section_of


def test_the_page_has_every_section(campaign: CampaignResult) -> None:
    dom = Census(render_html(campaign))
    for section in (
        "header",
        "summary",
        "metrics",
        "coverage",
        "charts",
        "mutants",
        "violations",
        "runs",
    ):
        assert dom.by_id(section) is not None, section


def test_one_coverage_cell_per_discovered_boundary(campaign: CampaignResult) -> None:
    dom = Census(render_html(campaign))
    cells = dom.by_class("cov-cell")
    assert len(cells) == 11
    by_label = {c.attrs["data-label"]: c.classes for c in cells[:8]}
    assert "outcome-violation" in by_label["charge:transport.response_received"]
    assert "outcome-ok" in by_label["lease.acquired"]
    assert "outcome-not_crashed" in by_label["charge:effect.receipt_committed"]
    assert "outcome-needs_review" in cells[-1].classes


def _state(dom: Census, tile: str) -> str:
    element = dom.by_id(tile)
    assert element is not None, tile
    return element.attrs["data-state"]


def test_tiles_turn_red_for_violations_and_green_when_all_is_well(campaign: CampaignResult) -> None:
    dom = Census(render_html(campaign))
    assert _state(dom, "tile-violations") == "bad"
    assert _state(dom, "tile-mutation") == "bad"  # one mutant survived
    clean = campaign.model_copy(
        update={
            "runs": [r for r in campaign.runs if r.valid is not False],
            "mutants": [m for m in campaign.mutants if m.caught],
        }
    )
    dom = Census(render_html(clean))
    assert _state(dom, "tile-violations") == "good"
    assert _state(dom, "tile-mutation") == "good"


def test_charts_are_inline_svg(campaign: CampaignResult) -> None:
    dom = Census(render_html(campaign))
    figures = dom.by_class("chart")
    assert {f.attrs["id"] for f in figures} >= {"chart-recovery-clock", "chart-storage-growth"}
    assert len(dom.by_class("bar")) > 0 and len(dom.by_class("dot")) > 0


def test_each_mutant_is_a_row_and_the_survivor_is_marked(campaign: CampaignResult) -> None:
    dom = Census(render_html(campaign))
    rows = dom.by_class("mutant")
    assert len(rows) == 3
    assert sum("missed" in r.classes for r in rows) == 1


def test_the_mutants_say_what_found_each_and_how_fast(campaign: CampaignResult) -> None:
    html = render_html(campaign)
    assert "1 first found by the systematic plan, 1 by the exploration's generated" in html
    assert ", 1 escaped;" in html
    assert "<td>12.2</td>" in html and "<td>exploration</td>" in html


def test_a_violation_shows_its_timeline_evidence_and_replay_command(
    campaign: CampaignResult,
) -> None:
    html = section_of(render_html(campaign), "violations")
    dom = Census(html)
    assert len(dom.by_class("violation")) == 1
    assert len(dom.by_class("timeline")) == 1
    assert len([e for e in dom.by_class("halo") if e.tag == "circle"]) == 3
    assert "killpoint replay order_saga-r7.json" in html
    assert "payments charged order-r7 twice" in html


def test_without_a_schedule_file_the_page_still_carries_the_schedule(
    campaign: CampaignResult,
) -> None:
    runs = [r.model_copy(update={"schedule_file": None}) for r in campaign.runs]
    html = section_of(render_html(campaign.model_copy(update={"runs": runs})), "violations")
    assert "killpoint replay order_saga-r7.json" in html
    [violation] = [r for r in runs if r.valid is False]
    saved = carried_files(html)["order_saga-r7.json"]
    assert FaultSchedule.model_validate_json(saved) == violation.schedule


def test_engine_supplied_text_is_escaped(campaign: CampaignResult) -> None:
    run = campaign.violations[0]
    nasty = Verdict(
        checker="single_effect",
        valid=False,
        summary="<script>alert(1)</script>",
        evidence=["<img src=x onerror=alert(1)>"],
    )
    runs = [run.model_copy(update={"verdicts": [nasty]})]
    html = render_html(campaign.model_copy(update={"runs": runs}))
    assert "<script>alert" not in html and "<img" not in html
    assert "&lt;script&gt;alert" in html


def test_nothing_is_fetched_from_the_network(campaign: CampaignResult) -> None:
    html = render_html(campaign)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert "@import" not in html and "url(" not in html
    assert "<link" not in html
    scripts = re.findall(r"<script[^>]*>", html)  # the per-run table's, inline
    assert scripts == ['<script type="application/json" id="run-data">', "<script>"]


def _many_runs(campaign: CampaignResult, copies: int) -> CampaignResult:
    runs: list[RunResult] = []
    for i in range(copies):
        runs += [r.model_copy(update={"run_id": f"{r.run_id}-{i}"}) for r in campaign.runs]
    return campaign.model_copy(update={"runs": runs})


def test_a_large_campaign_draws_one_group_per_class_and_lists_the_rest_in_a_line(
    campaign: CampaignResult,
) -> None:
    big = _many_runs(campaign, 400)  # 3,200 runs, 400 violations of one class, with histories
    page = build_page(big)
    assert [g.size for g in page.groups] == [400]
    assert page.groups[0].first.run.run_id == "r7-0"  # smallest schedule, then run id
    html = render_html(big)
    assert len(html) < 1_000_000
    violations = Census(section_of(html, "violations"))
    assert len(violations.by_class("timeline")) == 1
    assert len(violations.by_class("rest-runs")) == 1
    assert section_of(html, "violations").count('<td class="run-id">') == 399


def test_an_empty_campaign_still_renders(empty: CampaignResult) -> None:
    dom = Census(render_html(empty))
    assert dom.by_id("summary") is not None
    assert dom.by_class("cov-cell") == []
    assert dom.by_class("violation") == []


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_a_quarantined_legacy_checkpoint_is_labelled_an_expected_migration_failure(
    campaign: CampaignResult,
) -> None:
    text = _text(render_html(campaign))
    assert (
        "schema-migration failures 1 in 1 runs — expected: the unsafe legacy checkpoint was "
        "quarantined instead of resumed"
    ) in text


def test_a_stop_for_review_the_oracle_passed_is_labelled_expected(
    campaign: CampaignResult,
) -> None:
    html = render_html(campaign)
    assert _state(Census(html), "tile-review") == "expected"
    assert "1 of 8 runs — expected: a fault left an effect's outcome unknowable" in _text(html)


def test_a_migration_failure_the_oracle_rejected_is_not_called_expected(
    campaign: CampaignResult,
) -> None:
    failed = Verdict(checker="expected_outcome", valid=False, summary="quarantined")
    runs = [
        r.model_copy(update={"verdicts": [failed], "valid": False})
        if r.measures.migration_failures
        else r
        for r in campaign.runs
    ]
    text = _text(render_html(campaign.model_copy(update={"runs": runs})))
    assert "schema-migration failures 1 in 1 runs" in text
    assert "0 of 1 expected" in text and "1 not passed by the oracle" in text


def test_a_stop_for_review_the_oracle_rejected_is_not_called_expected(
    campaign: CampaignResult,
) -> None:
    failed = Verdict(checker="single_effect", valid=False, summary="sent twice, then stopped")
    runs = [
        r.model_copy(update={"verdicts": [failed], "valid": False})
        if r.measures.needs_review
        else r
        for r in campaign.runs
    ]
    html = render_html(campaign.model_copy(update={"runs": runs}))
    assert _state(Census(html), "tile-review") != "expected"
    assert "all expected" not in _text(html)
    assert "0 of 1 expected" in _text(html) and "1 not passed by the oracle" in _text(html)


def _verdict(html: str) -> str:
    found = re.search(r'<span class="badge (\w+)">', html)
    assert found
    return found.group(1)


def test_each_caught_mutant_shows_the_run_that_caught_it(campaign: CampaignResult) -> None:
    """Checker and runs in its row, linked to the run: evidence, a replay command naming the
    mutant, the schedule the page carries and the timeline."""
    html = section_of(render_html(campaign), "mutants")
    dom = Census(html)
    [catch] = dom.by_class("catch")  # no_ledger; skip_verify kept no run, stale_approval escaped
    assert catch.tag == "details" and catch.attrs["id"] == "mutant-no_ledger"
    assert "open" in catch.attrs  # a few catches are shown unfolded; many start folded
    assert len(dom.by_class("timeline")) == 1
    assert len([e for e in dom.by_class("halo") if e.tag == "circle"]) == 3  # the evidence
    replay = "killpoint replay order_saga-r7.json"
    assert f"<code>{replay} --engine mutant:no_ledger</code>" in html
    [link] = dom.by_class("schedule-download")
    assert link.attrs["download"] == "order_saga-r7.json"
    assert "payments charged order-r7 twice" in html
    assert "<code>order_saga: w0 charge:transport.response_received</code>" in html
    assert "your project's folder" not in html  # a mutant is ours: no module of the user's


def test_a_hunt_report_is_its_mutants_alone_green_when_each_is_caught(
    campaign: CampaignResult,
) -> None:
    caught = [m for m in campaign.mutants if m.caught]
    html = render_html(hunt_report(caught, 3.5))
    dom = Census(html)
    assert _verdict(html) == "pass"  # a caught mutant is the harness passing, not a violation
    assert [s for s in ("summary", "metrics", "violations", "runs") if dom.by_id(s)] == []
    assert len(dom.by_class("mutant")) == 2 and len(dom.by_class("timeline")) == 1
    assert _verdict(render_html(hunt_report(campaign.mutants))) == "fail"  # one escaped


def test_an_escaped_mutant_fails_the_page_as_it_fails_the_command(
    campaign: CampaignResult,
) -> None:
    clean = campaign.model_copy(update={"runs": [r for r in campaign.runs if r.valid is not False]})
    assert _verdict(render_html(clean)) == "fail"
    caught = [m for m in campaign.mutants if m.caught]
    html = render_html(clean.model_copy(update={"mutants": caught}))
    assert _verdict(html) == "unknown"  # and says why: one generated run was not judged
    assert "no violation; 1 run could not be judged (progress)" in html


def test_a_broken_engine_a_test_caught_as_expected_is_no_violation_of_the_page(
    campaign: CampaignResult,
) -> None:
    clean = campaign.model_copy(
        update={
            "runs": [r for r in campaign.runs if r.valid is not False],
            "mutants": [m for m in campaign.mutants if m.caught],
        }
    )
    html = render_html(with_a_catch_as_expected(clean))
    assert _verdict(html) == _verdict(render_html(clean)) == "unknown"  # one run unjudged
    dom = Census(html)
    assert dom.by_id("tile-violations").attrs["data-state"] == "good"  # type: ignore[union-attr]
    expected = section_of(html, "expected")
    text = _text(expected)
    assert f"{EXPECTING_TEST} mutant:no_ledger order_saga 1 of 2 single_effect 1" in text
    assert "fail_on_violation=False" in text and "do not fail it" in text
    assert len(Census(expected).by_class("timeline")) == 1
    assert "killpoint replay order_saga-r7.json --engine mutant:no_ledger" in expected
    assert section_of(html, "violations").count('class="violation"') == 0


def test_a_page_of_expected_catches_alone_is_green(campaign: CampaignResult) -> None:
    alone = with_a_catch_as_expected(hunt_report([]))
    html = render_html(alone)
    assert _verdict(html) == "pass"
    assert Census(html).by_id("expected") is not None and Census(html).by_id("mutants") is None
