"""A team's own scenario, in no catalogue, is read back with its workflow by a framework adapter.

The adapters' history readers are handed the run's scenario. Readers that looked workflows up
in the installed catalogues read a team's own scenario without its workflow: Agent Framework's
showed no checkpoint of it at all (progress and durable outcome false, the sequence unknown),
LangGraph's read its checkpoints without the workflow's terminal states.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig, run_in_tier
from killpoint.harness.catalogue import installed
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule
from tests.support.needs import needs_module

FRAMEWORKS = {"langgraph": "langgraph.checkpoint.sqlite", "agent-framework": "agent_framework"}


def _own_scenario() -> Scenario:
    """The order saga under a team's own names: the same steps, a workflow no catalogue has."""
    saga = installed().scenarios["order_saga"]
    return replace(saga, name="team_order", workflow=replace(saga.workflow, name="team_order"))


def _verdicts(framework: str, scenario: Scenario, workdir: Path) -> dict[str, object]:
    engine = load_engine(f"{framework}:keyed")
    schedule = FaultSchedule(scenario=scenario.name, run_id="clean", engine=engine.ref)
    with Campaign(CampaignConfig(scenarios=[], workdir=workdir, engine=engine)) as campaign:
        history = run_in_tier(campaign.world, scenario, schedule, engine)
    assert history.failures == [] and history.readable
    return {v.checker: (v.valid, v.summary) for v in check_all(history, scenario.workflow)}


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_a_team_s_own_scenario_is_judged_as_the_catalogue_s_copy_of_it(
    framework: str, tmp_path: Path
) -> None:
    """The same workflow under a team's own name gets the catalogue scenario's verdicts: none is
    unknown (or false) for the reader's lack of the workflow."""
    needs_module(FRAMEWORKS[framework], f"the {framework} extra is not installed")
    own = _own_scenario()
    assert all(s.workflow.name != own.workflow.name for s in installed().scenarios.values())
    catalogue_s = _verdicts(framework, installed().scenarios["order_saga"], tmp_path / "catalogue")
    assert _verdicts(framework, own, tmp_path / "own") == catalogue_s
