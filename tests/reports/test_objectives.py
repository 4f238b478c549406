"""The recovery-objectives section: per scenario the declared RPO and RTO, the share of crashes
within each, the worst, the runs that missed them with their replay commands; "not declared"
where no objective was set; results written before objectives were measured still merge."""

from __future__ import annotations

import json
from html import unescape

from killpoint.harness.campaign.merge import merge_results
from killpoint.harness.objectives import CrashRecovery, RecoveryObjectives, judge
from killpoint.harness.results import CampaignResult
from killpoint.reports.html import render_html
from killpoint.reports.metrics import campaign_metrics
from killpoint.reports.objectives import objectives_summary, scenario_objectives
from killpoint.reports.objectives_view import console_figure, within
from killpoint.reports.view import build_page
from tests.support.campaigns import sample_campaign
from tests.support.dom import Census, section_of

SAGA = RecoveryObjectives(rpo_steps=1, rto_s=120.0)
# (run, lost steps, recovery seconds or None for never back): r7 misses the RPO, r2 the RTO
CRASHES = {"r1": (0, 60.0), "r2": (1, None), "r7": (3, 60.0)}
R7_REPLAY = "killpoint replay order_saga-r7.json"


def _judged(campaign: CampaignResult) -> CampaignResult:
    """The sample campaign as a campaign with objectives writes it: the saga declares some,
    research_publish none; each run with a death has its crash measured."""
    runs = []
    for run in campaign.runs:
        declared = SAGA if run.scenario == "order_saga" else None
        lost, back = CRASHES.get(run.run_id, (1, 60.0))
        crashes = [
            CrashRecovery(worker=0, at=run.label, lost_steps=lost, recovery_s=back)
            for _ in range(run.measures.deaths)
        ]
        runs.append(run.model_copy(update={"objectives": judge(declared, crashes)}))
    return campaign.model_copy(update={"runs": runs})


def test_a_scenario_counts_its_crashes_within_each_objective_and_its_worst(
    campaign: CampaignResult,
) -> None:
    saga, publish = objectives_summary(_judged(campaign)).scenarios
    assert (saga.scenario, saga.declared, saga.runs_with_crash) == ("order_saga", SAGA, 3)
    assert (saga.rpo.within, saga.rpo.crashes, saga.rpo.worst) == (2, 3, 3.0)
    assert (saga.rto.within, saga.rto.worst, saga.rto.never_back) == (2, None, 1)
    assert [(m.run_id, m.rpo, m.rto) for m in saga.missed] == [
        ("r2", "met", "missed"),
        ("r7", "missed", "met"),
    ]
    assert (publish.declared, publish.rpo.within, publish.rto.within) == (None, None, None)
    assert publish.rpo.worst == 1.0  # measured all the same, judged against nothing


def test_the_json_summary_and_the_console_line_carry_the_counts(
    campaign: CampaignResult,
) -> None:
    summary = campaign_metrics(_judged(campaign)).objectives
    assert (summary.declared, summary.crashes, summary.not_measured) == (1, 6, 0)
    assert (summary.runs_missed_rpo, summary.runs_missed_rto, summary.runs_missed) == (1, 1, 2)
    assert console_figure(summary) == "objectives missed: RPO 1 runs, RTO 1 runs"
    assert console_figure(campaign_metrics(campaign).objectives) == (
        "recovery objectives not declared"
    )


def test_the_report_shows_each_scenarios_objectives_and_the_runs_that_missed_them(
    campaign: CampaignResult,
) -> None:
    judged = _judged(campaign)
    html = render_html(judged)
    section = unescape(section_of(html, "objectives"))
    dom = Census(section)
    saga, publish = dom.by_class("objectives")
    assert saga.attrs["data-scenario"] == "order_saga" and "objectives-warn" in saga.classes
    assert "objectives-neutral" in publish.classes
    assert [e.attrs["data-run"] for e in dom.elements if "data-run" in e.attrs] == ["r2", "r7"]
    assert "66.7% (2 of 3 crashes)" in section and "never back after 1 crash" in section
    assert "missed RPO:" in section and R7_REPLAY in section
    assert section.count("not declared") == 4  # research_publish: both objectives, two columns
    assert build_page(judged).tiles[1].value == "1"  # the one violation: no miss adds to it


def test_results_written_before_objectives_merge_and_read_not_measured(
    campaign: CampaignResult,
) -> None:
    def part(result: CampaignResult, scenario: str) -> CampaignResult:
        return result.model_copy(
            update={"runs": [r for r in result.runs if r.scenario == scenario]}
        )

    # a shard written before objectives were measured: its runs have no `objectives` at all
    data = json.loads(part(campaign, "order_saga").model_dump_json())
    for run in data["runs"]:
        del run["objectives"]
    old = CampaignResult.model_validate_json(json.dumps(data))
    merged = merge_results([old, part(_judged(campaign), "research_publish")])
    summary = objectives_summary(merged)
    assert (summary.not_measured, summary.crashes, summary.runs_missed) == (5, 3, 0)
    saga = summary.scenarios[0]
    assert (saga.scenario, saga.runs, saga.declared) == ("order_saga", 0, None)
    section = section_of(render_html(merged), "objectives")
    assert "not declared" in section and "objective-misses" not in section


def test_a_crash_the_engine_did_not_show_is_counted_unknown_not_within() -> None:
    unseen = CrashRecovery(worker=0, at="a", lost_steps=None, recovery_s=None)
    seen = CrashRecovery(worker=0, at="b", lost_steps=1, recovery_s=60.0)
    runs = [
        run.model_copy(update={"objectives": judge(SAGA, [crash])})
        for run, crash in zip(sample_campaign().runs[1:3], (unseen, seen), strict=True)
    ]
    figures = scenario_objectives("order_saga", runs)
    assert (figures.rpo.within, figures.rpo.unknown, figures.rpo.worst) == (1, 1, 1.0)
    assert within(figures.rpo) == "50.0% (1 of 2 crashes, 1 unknown)"
    assert (figures.rto.within, figures.rto.runs_missed, figures.rto.never_back) == (1, 0, 1)
