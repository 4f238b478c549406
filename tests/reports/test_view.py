"""What the page decides before the template lays it out: above all, the replay command and the
schedule the page carries for it."""

from __future__ import annotations

import base64

from killpoint.harness.results import CampaignResult, RunResult
from killpoint.harness.schedule import FaultSchedule
from killpoint.reports.embedded import file_name
from killpoint.reports.groups import violation_view
from killpoint.reports.html import render_html
from killpoint.reports.junit import junit_xml
from killpoint.reports.view import build_page
from tests.support.dom import Census, section_of

FILE = "killpoint-out/schedules/order_saga-r7.json"


def _violation(campaign: CampaignResult, **update: object) -> RunResult:
    run = campaign.violations[0]
    schedule = run.schedule.model_copy(update={k: v for k, v in update.items() if k == "engine"})
    fields = {k: v for k, v in update.items() if k != "engine"}
    return run.model_copy(update={"schedule": schedule, **fields})


def _with(campaign: CampaignResult, run: RunResult) -> CampaignResult:
    runs = [run if r.run_id == run.run_id else r for r in campaign.runs]
    return campaign.model_copy(update={"runs": runs})


def test_the_replay_command_names_the_carried_file_alone_since_the_schedule_names_its_engine(
    campaign: CampaignResult,
) -> None:
    run = _violation(campaign)
    assert run.schedule.engine == "reference" and run.schedule_file == FILE

    view = violation_view(run, with_timeline=False)

    assert view.replay == view.schedule.replay == "killpoint replay order_saga-r7.json"
    assert view.schedule.file_name == "order_saga-r7.json"
    prefix, _, encoded = view.schedule.href.partition(",")
    assert prefix == "data:application/json;base64"
    assert FaultSchedule.model_validate_json(base64.b64decode(encoded)) == run.schedule


def test_a_carried_file_name_is_safe_for_a_shell_and_a_file_system(
    campaign: CampaignResult,
) -> None:
    odd = _violation(campaign, run_id="case: a/b $(x)")
    assert file_name(odd) == "order_saga-case--a-b---x-.json"
    assert violation_view(odd, False).replay == "killpoint replay order_saga-case--a-b---x-.json"


def test_a_schedule_that_names_no_engine_gets_no_replay_command_but_its_file(
    campaign: CampaignResult,
) -> None:
    # an engine handed to the harness as an object: `killpoint replay FILE` could not rebuild it
    run = _violation(campaign, engine=None)

    view = violation_view(run, with_timeline=False)

    assert view.replay is None
    assert b'"engine":null' in base64.b64decode(view.schedule.href.partition(",")[2])
    html = section_of(render_html(_with(campaign, run)), "violations")
    assert "killpoint replay" not in html
    assert "replay it through the test that ran it" in html
    [link] = Census(html).by_class("schedule-download")
    assert link.attrs["download"] == "order_saga-r7.json"
    text = junit_xml(_with(campaign, run)).decode()
    failure = text[text.index("<failure") : text.index("</failure>")]
    assert "killpoint replay" not in failure and f"schedule: {FILE}" in failure


def test_the_page_prints_the_command_beside_the_schedule_it_carries(
    campaign: CampaignResult,
) -> None:
    html = section_of(render_html(campaign), "violations")
    assert '<pre class="replay"><code>killpoint replay order_saga-r7.json</code></pre>' in html
    [link] = Census(html).by_class("schedule-download")
    assert link.tag == "a" and link.attrs["download"] == "order_saga-r7.json"
    assert link.attrs["href"].startswith("data:application/json;base64,")
    assert "killpoint-out" not in html  # nothing of the campaign's folder, which stays behind


def test_junit_keeps_the_campaigns_own_path_read_beside_the_campaign(
    campaign: CampaignResult,
) -> None:
    assert f"replay: killpoint replay {FILE}" in junit_xml(campaign).decode()


def test_recovery_time_chart_carries_its_percentiles(campaign: CampaignResult) -> None:
    chart = next(c for c in build_page(campaign).charts if c.id == "recovery-clock")
    assert chart.note == "p50 61 s · p90 130 s · p99 130 s · max 130 s"


def test_an_engine_of_the_users_own_is_named_where_its_command_must_run(
    campaign: CampaignResult,
) -> None:
    run = _violation(campaign, engine="broken_engine:factory")
    html = section_of(render_html(_with(campaign, run)), "violations")
    assert "where its engine <code>broken_engine:factory</code> loads" in html
