"""Deploys around in-flight runs: each strategy ends as its policy says, with its decision on
the lineage, through deaths at the decision; an engine that resumes old runs on new code is
caught by `deploy_policy`."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint import scenarios
from killpoint.contract.records import DEPLOY_STRATEGIES, DeployStrategy
from killpoint.harness.campaign.deploy_plan import (
    DECISION,
    PAUSE,
    base_versions,
    decider,
    deploy_runs,
    deploy_schedule,
    deployed,
)
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.plan import Plan, PlanOptions, clean
from killpoint.harness.checkers import check_all
from killpoint.harness.checkers.deploy import check_deploy
from killpoint.harness.checkers.deploy_outcome import DECIDED as OUTCOME
from killpoint.harness.checkers.deploy_outcome import deploy_outcome
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.results import combine
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import HitPoint, Tamper
from killpoint.scenarios.mutants import MUTANTS

SCENARIO = scenarios.get("research_publish")
PAUSED = HitPoint(worker=0, step="draft", boundary=PAUSE)


def _run(world: World, strategy: DeployStrategy, *deaths: HitPoint, engine: str = "") -> History:
    schedule = deploy_schedule(SCENARIO, f"d-{strategy}", strategy, (PAUSED, *deaths))
    return run_schedule(world, SCENARIO, schedule, MUTANTS[engine] if engine else REFERENCE)


def _decisions(history: History) -> list[str]:
    return [c.reason for c in history.checkpoints if c.reason.startswith(c.decision or "-")]


def test_a_drained_run_finishes_on_old_workers_after_a_new_one_leaves_it(world: World) -> None:
    history = _run(world, "drain")
    assert history.final_status == "completed"
    assert [w.versions == deployed(SCENARIO) for w in history.workers] == [False, True, False]
    assert history.workers[1].reason.startswith("drain: a run of the old version")
    assert {c.versions for c in history.checkpoints} == {base_versions(SCENARIO)}
    assert _decisions(history) == [
        "drain: deploy of prompt prompt@1→prompt@1+deploy; the run finishes on workers of its "
        "version before the new version takes over"
    ]
    assert deploy_outcome(history) == "finished_on_old"
    assert combine(check_all(history, SCENARIO.workflow)) is True


def test_a_coexisting_run_keeps_old_workers_and_records_why(world: World) -> None:
    history = _run(world, "coexist")
    assert history.final_status == "completed"
    assert {c.versions for c in history.checkpoints} == {base_versions(SCENARIO)}
    assert [c.decision for c in history.checkpoints][-1] == "coexist"
    assert deploy_outcome(history) == "coexisted"
    assert combine(check_all(history, SCENARIO.workflow)) is True


def test_a_migrated_run_resumes_on_the_new_version_as_a_child_run(world: World) -> None:
    history = _run(world, "migrate")
    assert history.final_status == "completed"
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    migrated = next(c for c in history.checkpoints if c.decision == "migrate")
    before = history.checkpoints[migrated.sequence - 2]
    assert migrated.state == before.state and migrated.parent_run_id == before.run_id
    assert migrated.reason.startswith("migrate: deploy of prompt prompt@1→prompt@1+deploy")
    later = history.checkpoints[migrated.sequence - 1 :]
    assert {c.versions for c in later} == {deployed(SCENARIO)}
    assert deploy_outcome(history) == "migrated"
    assert combine(check_all(history, SCENARIO.workflow)) is True


def test_a_migration_the_policy_forbids_is_refused_into_quarantine(world: World) -> None:
    schedule = deploy_schedule(SCENARIO, "d-plan", "migrate", (PAUSED,), deployed(SCENARIO, "plan"))
    history = run_schedule(world, SCENARIO, schedule, REFERENCE)
    assert history.final_status == "quarantined"
    assert history.final_reason.startswith("migrate refused: plan publish-flow@5→")
    assert deploy_outcome(history) == "refused"
    assert combine(check_all(history, SCENARIO.workflow)) is True


@pytest.mark.parametrize("boundary", DECISION)
@pytest.mark.parametrize("strategy", DEPLOY_STRATEGIES)
def test_a_death_at_the_decision_leaves_one_decision_and_a_finished_run(
    world: World, strategy: DeployStrategy, boundary: str
) -> None:
    death = HitPoint(worker=decider(strategy), step=None, boundary=boundary)
    history = _run(world, strategy, death)
    assert [w.end for w in history.workers].count("killed") == 2
    assert history.final_status == "completed"
    assert len(_decisions(history)) == 1
    assert combine(check_all(history, SCENARIO.workflow)) is True


@pytest.mark.parametrize("strategy", DEPLOY_STRATEGIES)
def test_resuming_old_runs_on_new_code_is_caught_under_every_strategy(
    world: World, strategy: DeployStrategy
) -> None:
    history = _run(world, strategy, engine="resumes_across_versions")
    verdict = check_deploy(history, SCENARIO.workflow)
    assert verdict.valid is False
    assert "resumed a run of another version without migrating it" in verdict.summary
    assert deploy_outcome(history) == "undecided"


def test_a_lineage_without_the_decision_is_a_violation(world: World) -> None:
    history = _run(world, "drain")
    bare = [c.model_copy(update={"decision": "start"}) for c in history.checkpoints]
    verdict = check_deploy(history.model_copy(update={"checkpoints": bare}), SCENARIO.workflow)
    assert verdict.valid is False
    assert "records no drain decision" in verdict.summary


def test_a_deploy_is_unknown_to_an_engine_that_keeps_no_versions(world: World) -> None:
    history = _run(world, "coexist")
    blind = history.model_copy(update={"lacks": ["versions"]})
    assert check_deploy(blind, SCENARIO.workflow).valid == "unknown"
    assert check_deploy(history, SCENARIO.workflow).valid is True


def test_the_plan_deploys_around_each_committed_step_only_when_asked(world: World) -> None:
    batch = scenarios.get("batch")
    schedules = list(deploy_runs(batch))
    kinds = {(s.deploys[0].strategy, len(s.crashes)) for s in schedules}
    assert kinds == {(s, n) for s in DEPLOY_STRATEGIES for n in (1, 2)}
    assert schedules[-1].deploys[0].versions.plan.endswith("+deploy")
    recording = run_schedule(world, batch, clean(batch).schedule, REFERENCE)
    for deploys in (False, True):
        plan = Plan([batch], PlanOptions(deploys=deploys, double=False, interleave=False))
        plan.observe(clean(batch), recording)
        made = [r.schedule for r in plan.scenario_runs(batch) if r.kind == "deploy"]
        assert made == (schedules if deploys else [])
        assert plan.expected_runs() == len(list(plan.scenario_runs(batch)))


@pytest.mark.realtier
def test_each_strategy_holds_when_workers_die_by_sigkill(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    """The real tier: forked workers are told of the deploy and routed around it as in-process."""
    config = CampaignConfig(scenarios=[SCENARIO], workdir=tmp_path, engine=REFERENCE, tier="real")
    with Campaign(config) as campaign:
        for strategy in DEPLOY_STRATEGIES:
            death = HitPoint(worker=decider(strategy), step=None, boundary=DECISION[1])
            schedule = deploy_schedule(SCENARIO, f"real-{strategy}", strategy, (PAUSED, death))
            result, history = campaign.judge(SCENARIO, schedule, "deploy")
            assert [w.end for w in history.workers].count("sigkill") == 2, strategy
            assert result.valid is True, result.verdicts
            assert result.measures.deploy_outcome == OUTCOME[strategy]


def test_a_legacy_run_met_by_a_drain_is_left_to_the_compatibility_policy(world: World) -> None:
    """A checkpoint of a third, older version is not the deploy's to route: old workers apply
    the policy (found by generated schedules: both sides refused it, and it never ended)."""
    crash = HitPoint(worker=0, step="research", boundary="step.begin")
    schedule = deploy_schedule(SCENARIO, "legacy", "drain", (crash,)).model_copy(
        update={"tamper": (Tamper(after_worker=1, kind="legacy_v2"),)}
    )
    history = run_schedule(world, SCENARIO, schedule, REFERENCE)
    assert history.final_status == "completed"
    assert {c.decision for c in history.checkpoints} >= {"restart"}
    assert deploy_outcome(history) == "by_policy"
    assert combine(check_all(history, SCENARIO.workflow)) is True
