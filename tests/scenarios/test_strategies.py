"""The fault-schedule strategies: valid, replayable schedules drawn from recorded boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from killpoint.fake_services.faults import FaultMode, FaultRule
from killpoint.harness.campaign.plan import DEDUPING
from killpoint.harness.checkers import check_all
from killpoint.harness.checkers.ground_truth import MUTATIONS
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint, load_schedule, save_schedule
from killpoint.scenarios import get
from killpoint.scenarios.strategies import (
    crash_chains,
    discover,
    fault_schedules,
    network_rules,
)

SCENARIOS = ("order_saga", "research_publish", "approval_refund")
_labels = {
    name: {(p.step, p.boundary, p.occurrence) for p in discover(name).boundaries}
    for name in SCENARIOS
}


def test_discovery_is_a_recording_of_a_clean_run(tmp_path: Path) -> None:
    with World.open(tmp_path) as world:
        clean = run_schedule(
            world,
            get("order_saga"),
            FaultSchedule(scenario="order_saga", run_id="clean"),
            REFERENCE,
        )
    found = discover("order_saga")
    assert [(p.step, p.boundary, p.occurrence) for p in found.first] == [
        (h.step, h.boundary, h.occurrence) for h in clean.hits
    ]
    # recovery-only boundaries (reconciliation) come from recorded recoveries too
    assert any(p.boundary.startswith("reconcile.") for p in found.recovery)


@given(st.sampled_from(SCENARIOS).flatmap(lambda s: st.tuples(st.just(s), fault_schedules(s))))
def test_generated_schedules_validate_and_round_trip(case: tuple[str, FaultSchedule]) -> None:
    name, schedule = case
    assert schedule.scenario == name
    again = FaultSchedule.model_validate_json(schedule.model_dump_json())
    assert again == schedule


def test_saved_schedule_loads_back(tmp_path: Path) -> None:
    schedule = find(fault_schedules("research_publish"), lambda s: len(s.crashes) >= 2)
    assert load_schedule(save_schedule(schedule, tmp_path / "s.json")) == schedule


def test_the_minimal_schedule_is_fault_free() -> None:
    for name in SCENARIOS:
        minimal = find(fault_schedules(name), lambda s: True)
        assert minimal == FaultSchedule(scenario=name, run_id="generated")
        assert minimal.describe() == "no faults"


def test_a_shrunk_crash_is_the_first_discovered_boundary() -> None:
    minimal = find(fault_schedules("order_saga"), lambda s: bool(s.crashes))
    first = discover("order_saga").first[0]
    assert minimal.crashes == (first.model_copy(update={"worker": 0}),)
    assert not (minimal.network.rules or minimal.tamper or minimal.clock_jumps)


@given(st.sampled_from(SCENARIOS).flatmap(lambda s: st.tuples(st.just(s), crash_chains(s))))
def test_crash_points_are_always_discovered_boundaries(
    case: tuple[str, tuple[HitPoint, ...]],
) -> None:
    name, chain = case
    for worker, point in enumerate(chain):
        assert point.worker == worker
        key = (point.step, point.boundary, point.occurrence)
        assert key in _labels[name]


@given(st.sampled_from(SCENARIOS).flatmap(network_rules))
def test_network_faults_hit_mutations_and_duplicate_only_where_deduped(rule: FaultRule) -> None:
    target = (rule.service, rule.operation)
    assert target in MUTATIONS
    if rule.mode is FaultMode.DUPLICATE_DELIVERY:
        assert target in DEDUPING


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fault_schedules("order_saga"))
def test_reference_engine_passes_generated_schedules(
    tmp_path_factory: pytest.TempPathFactory, schedule: FaultSchedule
) -> None:
    with World.open(tmp_path_factory.mktemp("w")) as world:
        history = run_schedule(world, get("order_saga"), schedule, REFERENCE)
    broken = [v for v in check_all(history, get("order_saga").workflow) if v.valid is False]
    assert not broken, (schedule.describe(), broken)
