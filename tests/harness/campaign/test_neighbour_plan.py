"""Which runs the plan and the exploration put beside neighbours: the riskiest single crash of
each scenario, the named cases at a gate, some generated schedules; none with the switch off,
and never the pairs and doubles drawn from a neighboured single."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.explore import Budget, Exploration, menu
from killpoint.harness.campaign.neighbour_plan import DRAW, drawn
from killpoint.harness.campaign.plan import Plan, PlannedRun, PlanOptions, clean
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.protocol import ANY_WORKFLOW
from killpoint.harness.results import RunMeasures, RunResult
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, Neighbour
from killpoint.scenarios import CATALOGUE


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[PlannedRun]]:
    """Each chosen scenario's plan, its singles observed, neighbours on and off."""
    chosen = [CATALOGUE[n] for n in ("approval_refund", "research_publish", "email")]
    root = tmp_path_factory.mktemp("plan")
    config = CampaignConfig(scenarios=chosen, workdir=root, engine=REFERENCE, named=True)
    runs: dict[str, list[PlannedRun]] = {}
    with Campaign(config) as campaign:
        for neighbours in (True, False):
            plan = Plan(chosen, PlanOptions(neighbours=neighbours, double_limit=20))
            for scenario in chosen:
                plan.observe(clean(scenario), campaign.judge(scenario, clean(scenario).schedule)[1])
                for run in plan.scenario_runs(scenario):
                    if run.kind == "single":
                        plan.observe(run, campaign.judge(scenario, run.schedule)[1])
                    runs.setdefault(f"{scenario.name}:{neighbours}", []).append(run)
    return runs


def _beside(runs: list[PlannedRun]) -> list[tuple[str, str, tuple[Neighbour, ...]]]:
    return [
        (r.kind, r.schedule.run_id, r.schedule.neighbours) for r in runs if r.schedule.neighbours
    ]


def test_the_riskiest_single_crash_has_a_neighbour_before_its_recovery(
    planned: dict[str, list[PlannedRun]],
) -> None:
    # the riskiest single told no lie (the world's faults one at a time)
    singles = [r for r in planned["email:True"] if r.kind == "single" and not r.schedule.lies]
    assert singles[0].schedule.neighbours == (Neighbour(kind="tenant", before_worker=1),)
    others = [r for r in planned["email:True"] if r.kind == "single" and r is not singles[0]]
    assert all(not r.schedule.neighbours for r in others)
    cms = [r for r in planned["research_publish:True"] if r.kind == "single"]
    untold = [r for r in cms if not r.schedule.lies]
    assert untold[0].schedule.neighbours == (Neighbour(kind="workflow", before_worker=1),)


def test_named_cases_at_a_gate_have_another_workflow_through_it_first(
    planned: dict[str, list[PlannedRun]],
) -> None:
    gated = [r for r in planned["approval_refund:True"] if r.kind == "named"]
    assert gated and all(
        r.schedule.neighbours == (Neighbour(kind="workflow", before_worker=0),) for r in gated
    )
    ungated = [r for r in planned["research_publish:True"] if r.kind == "named"]
    assert ungated and not _beside(ungated)


def test_pairs_and_doubles_go_without_the_singles_neighbours(
    planned: dict[str, list[PlannedRun]],
) -> None:
    for name in ("approval_refund", "research_publish", "email"):
        runs = planned[f"{name}:True"]
        assert {k for k, _, _ in _beside(runs)} <= {"single", "named"}
        assert any(r.kind in ("pair", "double") for r in runs)


def test_the_switch_off_gives_no_run_a_neighbour(planned: dict[str, list[PlannedRun]]) -> None:
    for name in ("approval_refund", "research_publish", "email"):
        off, on = planned[f"{name}:False"], planned[f"{name}:True"]
        assert not _beside(off)
        # the same runs otherwise, in the same order
        assert [r.schedule.run_id for r in off] == [r.schedule.run_id for r in on]


def test_the_exploration_draw_gives_a_few_runs_a_neighbour_and_shrinks_to_none() -> None:
    email, cms = CATALOGUE["email"], CATALOGUE["research_publish"]
    given = [drawn(value, email) for value in range(DRAW)]
    assert given[0] == () and sum(1 for g in given if g) == 2
    assert {n.kind for g in given for n in g} == {"tenant", "workflow"}
    assert {n.kind for v in range(DRAW) for n in drawn(v, cms)} == {"workflow"}


def _explored(scenario: Scenario, recording: History, neighbours: bool) -> list[FaultSchedule]:
    seen: list[FaultSchedule] = []

    def judge(s: Scenario, schedule: FaultSchedule) -> tuple[RunResult, History]:
        seen.append(schedule)
        result = RunResult(
            run_id=schedule.run_id, scenario=s.name, kind="generated", label="",
            schedule=schedule, final_status="completed", final_state="", verdicts=[],
            valid=True, measures=RunMeasures(),
        )  # fmt: skip
        return result, recording

    Exploration(menu(scenario, recording, []), judge, Budget(runs=200), neighbours=neighbours).run()
    return seen


def test_the_exploration_draws_neighbours_only_when_asked(tmp_path: Path) -> None:
    scenario = CATALOGUE["email"]
    with Campaign(CampaignConfig(scenarios=[], workdir=tmp_path, engine=REFERENCE)) as campaign:
        recording = campaign.judge(scenario, clean(scenario).schedule)[1]
    with_them = _explored(scenario, recording, True)
    without = _explored(scenario, recording, False)
    assert any(s.neighbours for s in with_them)
    assert not any(s.neighbours for s in without)


def test_an_engine_whose_workers_run_any_workflow_gets_no_neighbours(tmp_path: Path) -> None:
    serving = replace(REFERENCE, lacks=frozenset({ANY_WORKFLOW}))
    config = CampaignConfig(scenarios=[], workdir=tmp_path, engine=serving)
    assert config.neighbours and not config.plan_options().neighbours
    assert (
        CampaignConfig(scenarios=[], workdir=tmp_path, engine=REFERENCE).plan_options().neighbours
    )
