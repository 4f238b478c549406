"""The report in a real headless Chromium: it loads offline, cleanly, with its tables and charts.

Debian's `chromium` package is driven through Playwright's Python API with `executable_path`
(Playwright's own browser download is not used). Without chromium or playwright the test
skips, saying why, and under CI (which installs chromium) it fails, saying why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from killpoint.harness.results import CampaignResult
from killpoint.harness.schedule import load_schedule
from killpoint.reports.html import write_html
from killpoint.reports.trends import append_trend, trend_record
from tests.support.campaigns import doubtful_campaign
from tests.support.needs import needs_module, needs_program

if TYPE_CHECKING:  # playwright is a need of this test, not of the product
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = needs_program("chromium", "the report is checked in it (apt-get install chromium)")
    sync_api = needs_module("playwright.sync_api", "playwright is not installed (the test extra)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def test_the_report_loads_offline_with_its_tables_charts_and_timelines(
    browser: Browser, campaign: CampaignResult, tmp_path: Path
) -> None:
    report = write_html(campaign, tmp_path / "killpoint-out" / "report.html")
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    console_errors: list[str] = []
    failed: list[str] = []
    remote: list[str] = []
    page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: console_errors.append(str(exc)))
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on(
        "request",
        lambda request: remote.append(request.url) if not request.url.startswith("file:") else None,
    )

    page.goto(report.as_uri(), wait_until="load")

    assert console_errors == []
    assert failed == []
    assert remote == []
    assert page.locator("#summary .tile").count() == 8
    assert page.locator("#coverage table .cov-cell").count() == 11
    assert page.locator("#coverage .cov-cell.outcome-violation").count() == 1
    assert page.locator("#charts svg").count() == 3
    assert page.locator("#chart-recovery-clock rect.bar").count() > 0
    assert page.locator("#chart-storage-growth circle.dot").count() > 0
    assert page.locator("#mutants tr.mutant").count() == 3
    assert page.locator(".violation svg.timeline").count() == 1
    assert page.locator(".violation svg.timeline circle.halo").count() == 3
    replay = page.locator(".violation pre.replay").inner_text()
    assert replay == "killpoint replay order_saga-r7.json"
    catch = page.locator("#mutant-no_ledger")  # under its row: the run that caught the mutant
    assert catch.locator("pre.replay").inner_text() == (
        "killpoint replay order_saga-r7.json --engine mutant:no_ledger"
    )
    timeline = catch.locator("svg.timeline").bounding_box()
    assert timeline is not None and timeline["width"] > 300 and timeline["height"] > 100
    catch.locator(":scope > summary").click()  # folds away, and the table keeps to the page's width
    assert not catch.locator("svg.timeline").is_visible()
    table = page.locator("#mutants table.mutants").bounding_box()
    assert table is not None and table["width"] < 1366
    box = page.locator("#chart-recovery-clock svg").bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    page.close()


def test_the_save_link_downloads_the_schedule_under_the_name_the_command_replays(
    browser: Browser, campaign: CampaignResult, tmp_path: Path
) -> None:
    report = write_html(campaign, tmp_path / "report.html")
    page = browser.new_page(accept_downloads=True)
    page.goto(report.as_uri(), wait_until="load")
    command = page.locator(".violation pre.replay").inner_text()

    with page.expect_download() as download:
        page.locator(".violation a.schedule-download").click()
    saved = tmp_path / "elsewhere" / download.value.suggested_filename
    download.value.save_as(saved)

    assert command == f"killpoint replay {saved.name}"
    assert load_schedule(saved) == campaign.violations[0].schedule
    page.close()


def test_the_trends_draw_one_line_a_figure_across_the_builds(
    browser: Browser, campaign: CampaignResult, tmp_path: Path
) -> None:
    history = tmp_path / "trend.jsonl"
    for commit in ("a1", "b2", "c3"):
        append_trend(history, trend_record(campaign, commit))
    report = write_html(campaign, tmp_path / "report.html", trend=history)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(report.as_uri(), wait_until="load")

    assert page.locator("#trends figure svg").count() == 5
    assert page.locator("#trend-violations circle.trend-point").count() == 3
    line = page.locator("#trend-violations path.trend-line").bounding_box()
    assert line is not None and line["width"] > 200  # drawn across the chart, oldest to newest


def test_the_per_run_table_filters_by_checker_phase_and_verdict_without_a_server(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    campaign = doubtful_campaign()
    report = write_html(campaign, tmp_path / "report.html")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(report.as_uri(), wait_until="load")
    rows = page.locator("#run-table tbody tr")
    assert rows.count() == len(campaign.runs) == 10
    page.select_option("#run-filters select[name=checker]", label="single_effect")
    assert rows.count() == 1 and rows.first.locator("td").first.inner_text() == "r7"
    page.select_option("#run-filters select[name=checker]", label="all")
    page.select_option("#run-filters select[name=phase]", label="named")
    assert rows.count() == 2  # the two quarantined runs
    page.select_option("#run-filters select[name=verdict]", label="violation")
    assert rows.count() == 0
    assert page.locator("#run-count").inner_text() == "0 of 10 runs"
    page.close()


def test_the_verdict_and_its_reason_are_in_the_first_screen(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    report = write_html(doubtful_campaign(), tmp_path / "report.html")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(report.as_uri(), wait_until="load")
    reason = page.locator("#verdict-reason")
    box = reason.bounding_box()
    assert box is not None and box["y"] + box["height"] < 1000
    assert reason.inner_text().startswith("1 run violates single_effect")
    page.close()
