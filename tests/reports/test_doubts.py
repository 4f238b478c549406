"""The report names every run it doubts: each unknown run and each run waiting for a person,
with its checker, reason, schedule and replay command, and a timeline on demand; and its
"manual intervention" counts the runs the operator queue lists."""

from __future__ import annotations

import re
from html import unescape

from killpoint.harness.results import CampaignResult
from killpoint.reports.embedded import file_name
from killpoint.reports.html import render_html
from killpoint.reports.view import build_page
from tests.support.campaigns import TAMPERED, doubtful_campaign
from tests.support.carried import carried_files
from tests.support.dom import Census, section_of


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _without_violations(campaign: CampaignResult) -> CampaignResult:
    return campaign.model_copy(update={"runs": [r for r in campaign.runs if r.valid is not False]})


def test_every_run_in_doubt_is_named_with_its_checker_reason_schedule_and_replay() -> None:
    campaign = doubtful_campaign()
    doubts = _text(section_of(render_html(campaign), "doubts"))
    assert "4 runs: 1 the oracle could not judge, 3 passed but waiting for a person" in doubts
    for run in campaign.runs:
        named = re.search(rf"\b{run.run_id}\b", doubts) is not None
        doubted = run.valid == "unknown" or run.final_status in ("quarantined", "needs_review")
        assert named == doubted, run.run_id
    assert "progress unknown" in doubts and "progress: budget ran out" in doubts
    assert f"quarantined: {TAMPERED}" in doubts
    first, other = [r for r in campaign.runs if r.final_status == "quarantined"]
    assert first.label in doubts and other.label in doubts
    carried = carried_files(render_html(campaign))
    for run in (first, other):  # each replays from the archive the page carries
        assert f"killpoint replay {file_name(run)}" in doubts
        assert carried[file_name(run)]


def test_the_needs_review_run_is_named_too_with_its_final_reason() -> None:
    campaign = doubtful_campaign()
    review = next(r for r in campaign.runs if r.final_status == "needs_review")
    reason = "payments.create_charge: lost response, outcome unknown"
    runs = [
        r.model_copy(update={"final_reason": reason}) if r is review else r for r in campaign.runs
    ]
    doubts = _text(section_of(render_html(campaign.model_copy(update={"runs": runs})), "doubts"))
    assert "needs_review after payments.create_charge:lost_response" in doubts
    assert f"needs_review: {reason}" in doubts


def test_a_page_without_violations_draws_the_doubted_runs_timelines_folded() -> None:
    clean = _without_violations(doubtful_campaign())
    html = section_of(render_html(clean), "doubts")
    dom = Census(html)
    assert len(dom.by_class("timeline")) == 1  # the quarantined group's smallest kept its history
    folded = re.search(r'<details class="on-demand">(?:(?!</details>).)*svg', html, re.S)
    assert folded is not None and '<details class="on-demand" open' not in html


def test_a_failing_page_lists_the_doubted_runs_without_their_timelines() -> None:
    page = build_page(doubtful_campaign())
    assert [(g.title, g.size) for g in page.doubts] == [
        ("progress unknown after no faults", 1),
        ("needs_review after payments.create_charge:lost_response", 1),
        ("quarantined after step.begin", 2),
    ]
    assert all(g.first.timeline is None for g in page.doubts)


def test_manual_intervention_counts_every_run_waiting_for_a_person_as_the_queue_lists() -> None:
    campaign = doubtful_campaign()
    page = build_page(campaign)
    assert page.metrics.needs_review.count == 1
    assert page.metrics.manual_intervention.count == page.queue.total == 3
    html = render_html(campaign)
    row = re.search(r'<tr id="row-manual"><td>[^<]*</td><td>([^<]*)</td><td>(.*?)</td>', html)
    assert row is not None
    assert row.group(1) == "30.0%" and _text(row.group(2)).startswith("3 of 10 runs wait")
    assert "needs_review 1, quarantined 2" in _text(row.group(2))
    queue = _text(section_of(html, "queue"))
    assert "3 runs ended waiting for a person" in queue and 'href="#doubts"' in section_of(
        html, "queue"
    )


def test_the_queue_command_names_the_campaign_folder_not_a_placeholder() -> None:
    queue = section_of(render_html(doubtful_campaign()), "queue")
    assert (
        "killpoint queue --db sqlite:///killpoint-out/c-1/queue.sqlite --tenant tenant-a" in queue
    )
    assert "CAMPAIGN" not in queue
