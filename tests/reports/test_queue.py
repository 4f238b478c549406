"""The report shows the operator queue at the end of a campaign: the runs that ended waiting
for a person, counted per reason and listed with their reasons."""

from __future__ import annotations

from killpoint.reports.html import render_html
from killpoint.reports.queue import queue_view
from tests.support.campaigns import empty_campaign, sample_campaign


def test_the_queue_holds_the_runs_that_wait_for_a_person_and_no_other() -> None:
    result = sample_campaign()
    view = queue_view(result)
    waiting = [r for r in result.runs if r.final_status == "needs_review"]
    assert view.counts == [("needs_review", 1)] and view.runs == waiting and view.omitted == 0


def test_the_page_has_a_queue_section_with_each_queued_run() -> None:
    page = render_html(sample_campaign())
    section = page.split('<section id="queue">', 1)[1].split("</section>", 1)[0]
    assert "1 run ended waiting for a person" in section
    assert (
        "needs_review: 1" in section
        and "killpoint queue --db sqlite:///CAMPAIGN/queue.sqlite" in section
    )
    [review] = [r for r in sample_campaign().runs if r.final_status == "needs_review"]
    assert review.label in page.split('<section id="doubts">', 1)[1].split("</section>", 1)[0]
    assert 'href="#doubts"' in section  # where the queue's runs are each named


def test_an_empty_campaign_has_an_empty_queue() -> None:
    page = render_html(empty_campaign())
    if '<section id="queue">' in page:  # a page with no runs may leave the section out
        assert "0 runs ended waiting for a person" in page
