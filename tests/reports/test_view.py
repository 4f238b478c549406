"""What the page decides before the template lays it out: above all, the replay command."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.results import CampaignResult, RunResult
from killpoint.reports.html import render_html, write_html
from killpoint.reports.junit import junit_xml
from killpoint.reports.places import Where
from killpoint.reports.view import build_page, replay_command, violation_view
from tests.support.dom import section_of

FILE = "killpoint-out/schedules/order_saga-r7.json"


def _violation(campaign: CampaignResult, **update: object) -> RunResult:
    run = campaign.violations[0]
    schedule = run.schedule.model_copy(update={k: v for k, v in update.items() if k == "engine"})
    fields = {k: v for k, v in update.items() if k != "engine"}
    return run.model_copy(update={"schedule": schedule, **fields})


def _with(campaign: CampaignResult, run: RunResult) -> CampaignResult:
    runs = [run if r.run_id == run.run_id else r for r in campaign.runs]
    return campaign.model_copy(update={"runs": runs})


def test_the_replay_command_is_the_file_alone_since_the_schedule_names_its_engine(
    campaign: CampaignResult,
) -> None:
    run = _violation(campaign)
    assert run.schedule.engine == "reference" and run.schedule_file == FILE

    view = violation_view(run, with_timeline=False)

    assert view.replay == replay_command(run) == f"killpoint replay {FILE}"
    assert view.replay_from_launch  # a relative path: from the folder the campaign ran in
    assert view.schedule_json is None


def test_a_schedule_path_is_quoted_for_the_shell_and_an_absolute_one_needs_no_hint(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    spaced = _violation(campaign, schedule_file="my runs/order saga.json")
    assert replay_command(spaced) == "killpoint replay 'my runs/order saga.json'"
    absolute = _violation(campaign, schedule_file=str(tmp_path / "s.json"))
    assert not violation_view(absolute, with_timeline=False).replay_from_launch


def test_a_schedule_that_names_no_engine_gets_no_replay_command_but_its_json(
    campaign: CampaignResult,
) -> None:
    # an engine handed to the harness as an object: `killpoint replay FILE` could not rebuild it
    run = _violation(campaign, engine=None)

    view = violation_view(run, with_timeline=False)

    assert replay_command(run) is None and view.replay is None
    assert view.schedule_json is not None and '"engine": null' in view.schedule_json
    html = section_of(render_html(_with(campaign, run)), "violations")
    assert "killpoint replay killpoint-out" not in html
    assert "replay it through the test that ran it" in html
    text = junit_xml(_with(campaign, run)).decode()
    failure = text[text.index("<failure") : text.index("</failure>")]
    assert "killpoint replay" not in failure and f"schedule: {FILE}" in failure


def test_the_page_prints_the_command_and_where_to_run_it(campaign: CampaignResult) -> None:
    html = render_html(campaign)
    assert f'<pre class="replay"><code>killpoint replay {FILE}</code></pre>' in html
    assert "run it in the folder the campaign was started in" in html


def test_recovery_time_chart_carries_its_percentiles(campaign: CampaignResult) -> None:
    chart = next(c for c in build_page(campaign).charts if c.id == "recovery-clock")
    assert chart.note == "p50 61 s · p90 130 s · p99 130 s · max 130 s"


def test_a_written_report_prints_paths_relative_to_its_own_folder(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    where = Where(report_dir=tmp_path / "killpoint-out", launch_dir=tmp_path)
    view = violation_view(_violation(campaign), with_timeline=False, where=where)
    assert view.replay == "killpoint replay schedules/order_saga-r7.json"
    assert view.schedule_file == "schedules/order_saga-r7.json" and not view.replay_from_launch
    elsewhere = Where(report_dir=tmp_path / "artifacts" / "html", launch_dir=tmp_path)
    assert elsewhere.path(FILE) == "../../killpoint-out/schedules/order_saga-r7.json"
    assert elsewhere.path(str(tmp_path / "abs.json")) == "../../abs.json"


def test_a_report_outside_the_launch_folder_prints_absolute_paths(tmp_path: Path) -> None:
    where = Where(report_dir=tmp_path / "tmp" / "report", launch_dir=tmp_path / "work" / "project")
    assert where.path(FILE) == str(tmp_path / "work" / "project" / FILE)
    assert where.launch_from_report == str(tmp_path / "work" / "project")


def test_a_file_outside_the_launch_folder_is_printed_absolute(tmp_path: Path) -> None:
    """A pytest session's schedules live under its temporary folder, not beside the report."""
    where = Where(report_dir=tmp_path / "project" / "out", launch_dir=tmp_path / "project")
    kept = tmp_path / "pytest-of-me" / "pytest-7" / "schedules" / "s.json"
    assert where.path(str(kept)) == str(kept)
    assert where.path(str(tmp_path / "project" / "s.json")) == "../s.json"


def test_write_html_links_the_schedule_from_the_report_folder(
    campaign: CampaignResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the launch folder: the campaign's paths start here
    html = write_html(campaign, tmp_path / "killpoint-out" / "report.html").read_text()
    assert '<pre class="replay"><code>killpoint replay schedules/order_saga-r7.json' in html
    assert 'href="schedules/order_saga-r7.json"' in html
    assert "PYTHONPATH=.." in html and "run it in this report's folder" in html
    assert f"replay {FILE}" not in html
