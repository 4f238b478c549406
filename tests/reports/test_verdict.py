"""The verdict badge carries its reason in one line, and agrees with what the command says."""

from __future__ import annotations

import re

from killpoint.harness.results import CampaignResult, Verdict
from killpoint.reports.groups import verdict_of, verdict_reason
from killpoint.reports.html import render_html


def _badge(html: str) -> tuple[str, str]:
    found = re.search(
        r'<span class="badge (\w+)">[^<]*</span> <small class="verdict-why" id="verdict-reason">'
        r"([^<]*)</small>",
        html,
    )
    assert found
    return found.group(1), found.group(2)


def _runs(campaign: CampaignResult, keep: object) -> CampaignResult:
    return campaign.model_copy(
        update={"runs": [r for r in campaign.runs if r.valid is not keep], "mutants": []}
    )


def test_a_failing_campaign_names_its_checker_and_smallest_counterexample(
    campaign: CampaignResult,
) -> None:
    assert _badge(render_html(campaign)) == (
        "fail",
        "1 run violates single_effect — smallest: w0 charge:transport.response_received "
        "(order_saga, run r7)",
    )


def test_many_violations_count_each_checker_that_objected_first(
    campaign: CampaignResult,
) -> None:
    bad = campaign.violations[0]
    other = bad.model_copy(
        update={"run_id": "r9", "verdicts": [Verdict(checker="progress", valid=False)]}
    )
    twice = campaign.model_copy(update={"runs": [*campaign.runs, other]})
    assert verdict_reason(twice).startswith("2 runs violate single_effect 1, progress 1 — smallest")


def test_unjudged_runs_without_a_violation_are_a_neutral_unknown_that_says_the_cli_exits_0(
    campaign: CampaignResult,
) -> None:
    clean = _runs(campaign, False)
    verdict, reason = _badge(render_html(clean))
    assert verdict == verdict_of(clean) == "unknown"
    assert reason == (
        "no violation; 1 run could not be judged (progress), so the CLI exits 0 and nothing "
        "is called passed"
    )


def test_a_passing_campaign_says_every_run_was_judged(campaign: CampaignResult) -> None:
    judged = campaign.model_copy(
        update={"runs": [r for r in campaign.runs if r.valid is True], "mutants": []}
    )
    assert _badge(render_html(judged)) == ("pass", "6 runs, none violating, none unjudged")


def test_an_escaped_mutant_is_the_reason_when_no_run_violates(campaign: CampaignResult) -> None:
    clean = campaign.model_copy(update={"runs": [r for r in campaign.runs if r.valid is True]})
    assert _badge(render_html(clean)) == ("fail", "1 mutant escaped: stale_approval")
