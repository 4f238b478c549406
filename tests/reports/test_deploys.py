"""The report's deploy table: per strategy, what became of the runs a deploy found in flight."""

from __future__ import annotations

from killpoint.harness.results import CampaignResult, RunResult
from killpoint.reports.deploys import DeployRow, deploy_rows, deploy_summary
from killpoint.reports.html import render_html
from tests.support.dom import section_of


def _deployed(run: RunResult, strategy: str, outcome: str, valid: bool = True) -> RunResult:
    measures = run.measures.model_copy(
        update={"deploy_strategy": strategy, "deploy_outcome": outcome}
    )
    return run.model_copy(update={"measures": measures, "valid": valid})


def _with_deploys(campaign: CampaignResult) -> CampaignResult:
    first = campaign.runs[0]
    runs = [
        _deployed(first, "coexist", "coexisted"),
        _deployed(first, "migrate", "migrated"),
        _deployed(first, "migrate", "refused"),
        _deployed(first, "migrate", "undecided", valid=False),
        _deployed(first, "drain", "finished_on_old"),
        _deployed(first, "drain", "untouched"),
    ]
    return campaign.model_copy(update={"runs": [*campaign.runs, *runs]})


def test_each_strategy_counts_its_runs_by_what_became_of_them(campaign: CampaignResult) -> None:
    assert deploy_rows(_with_deploys(campaign)) == [
        DeployRow("drain", 2, 1, 0, 0, 0, 1, 0, 0, 0),
        DeployRow("migrate", 3, 0, 1, 0, 1, 0, 0, 1, 1),
        DeployRow("coexist", 1, 0, 0, 1, 0, 0, 0, 0, 0),
    ]


def test_the_page_shows_the_deploy_table_only_for_a_deploy_campaign(
    campaign: CampaignResult,
) -> None:
    assert 'id="deploys"' not in render_html(campaign)
    table = section_of(render_html(_with_deploys(campaign)), "deploys")
    assert "6 runs deployed around" in table
    assert '<tr id="deploy-migrate" data-strategy="migrate"><td>migrate</td><td>3</td>' in table


def test_the_console_line_names_each_strategys_ends(campaign: CampaignResult) -> None:
    assert deploy_summary(deploy_rows(campaign)) is None
    assert deploy_summary(deploy_rows(_with_deploys(campaign))) == (
        "deploys: drain 2 (1 finished on old); migrate 3 (1 migrated, 1 refused, 1 undecided); "
        "coexist 1 (1 coexisted)"
    )
