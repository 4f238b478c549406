"""The exploration: generated schedules after the plan, deterministic for a seed, bounded by
its budget, each violation shrunk to a schedule that replays to the same verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.contract.errors import KillpointError
from killpoint.fake_services.faults import FaultMode
from killpoint.harness.campaign.execute import Campaign, CampaignConfig, run_in_tier
from killpoint.harness.campaign.explore import Budget, menu
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.results import combine
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, load_schedule
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.plans import explored, planned_searches


def test_a_budget_is_runs_or_seconds_or_none() -> None:
    assert Budget.parse("200") == Budget(runs=200)
    assert Budget.parse("30s") == Budget(seconds=30.0)
    assert not Budget.parse("0") and not Budget.parse("off")
    assert Budget.parse("30s").per_scenario(3) == Budget(seconds=10.0)
    assert Budget.parse("7").per_scenario(3) == Budget(runs=7)  # runs are per scenario
    with pytest.raises(KillpointError, match="RUNS or SECONDS"):
        Budget.parse("lots")


def test_the_menu_pairs_a_crash_with_faults_on_its_steps_service_reads_included(
    tmp_path: Path,
) -> None:
    scenario = CATALOGUE["research_publish"]
    clean = FaultSchedule(scenario=scenario.name, run_id="clean")
    with Campaign(CampaignConfig(scenarios=[], workdir=tmp_path, engine=REFERENCE)) as campaign:
        recording = campaign.execute(scenario, clean, "clean")[1]
    found = menu(scenario, recording, [])
    publish = [c for c in found.candidates if c.crash is not None and c.crash.step == "publish"]
    assert {c.service for c in publish} == {"cms"}
    assert {"create_post", "posts_by_slug", "get_post"} <= {c.operation for c in publish}
    reads = {c.mode for c in publish if c.operation == "get_post"}
    assert reads == {FaultMode.TIMEOUT_BEFORE_COMMIT, FaultMode.ERROR_BEFORE_COMMIT}
    assert any(c.crash is None for c in found.candidates)  # a fault alone, too


def test_exploration_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    def drawn(root: Path, seed: int) -> list[str]:
        found = explored(root, REFERENCE, "email", "12", seed)
        return [r.schedule.model_copy(update={"run_id": ""}).model_dump_json() for r in found]

    first = drawn(tmp_path / "a", 0)
    assert len(first) == 12
    assert drawn(tmp_path / "b", 0) == first
    assert drawn(tmp_path / "c", 1) != first


def test_the_reference_passes_what_the_exploration_generates(tmp_path: Path) -> None:
    found = explored(tmp_path, REFERENCE, "order_saga", "40")
    assert len(found) == 40 and all(r.kind == "generated" for r in found)
    assert [r for r in found if r.valid is False] == []
    deep = [r for r in found if len(r.schedule.crashes) > 2 or r.schedule.redeliver_after_end]
    assert deep  # beyond the plan's two crashes


def test_a_seconds_budget_ends_the_search(tmp_path: Path) -> None:
    campaign, searches = planned_searches(tmp_path, REFERENCE, "email", "2.5s")
    ticks = iter(range(10**6))  # a clock a second further on at each reading, not the wall's
    with campaign:
        for search in searches:
            search.clock = lambda: float(next(ticks))
        found = [found for search in searches for found in search.run()]
    # read at the start (0) and before each run after the first (1, 2, 3): 3 > 2.5 stops it
    assert len(found) == 3


def test_a_violation_is_shrunk_and_replays_in_a_fresh_world(tmp_path: Path) -> None:
    mutant = MUTANTS["finished_run_restarted_on_redelivery"]
    found = explored(tmp_path / "campaign", mutant, "order_saga", "60")
    violation = found[-1]
    assert violation.valid is False and violation.schedule_file is not None
    schedule = load_schedule(violation.schedule_file)
    # nothing else is needed: one start message after the end (honest or lying, both of which
    # the exploration draws: any redelivery of a finished run starts it over)
    assert schedule.describe() in ("start redelivered after the end", "lie:amount@w1")
    alone = schedule.model_copy(update={"lies": (), "redeliver_after_end": False})
    assert alone.describe() == "no faults"
    with World.open(tmp_path / "fresh") as world:
        history = run_in_tier(world, CATALOGUE["order_saga"], schedule, mutant)
    verdicts = check_all(history, CATALOGUE["order_saga"].workflow)
    assert combine(verdicts) is False
    assert {v.checker for v in verdicts if v.valid is False} == {
        v.checker for v in violation.verdicts if v.valid is False
    }


def test_no_budget_no_generated_runs(tmp_path: Path) -> None:
    assert explored(tmp_path, REFERENCE, "email", "0") == []
