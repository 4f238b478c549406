"""Every catalogued scenario is well formed and ends as it says on a clean run."""

from __future__ import annotations

import httpx
import pytest

from killpoint import scenarios
from killpoint.contract.errors import KillpointError
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.run.runner import Run
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios import CATALOGUE
from tests.scenarios.conftest import run, times_applied

ALL = sorted(CATALOGUE)


def test_catalogue_names_match_scenario_names() -> None:
    assert all(name == scenario.name for name, scenario in CATALOGUE.items())
    assert set(ALL) >= {
        "research_publish",
        "order_saga",
        "order_saga_refund",
        "approval_refund",
        "handoff",
        "batch",
        "email",
        "expensive_reuse",
    }


def test_get_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(KillpointError, match=r"known: .*order_saga"):
        scenarios.get("no_such_scenario")
    assert scenarios.get("email") is CATALOGUE["email"]


@pytest.mark.parametrize("name", ALL)
def test_every_service_a_workflow_uses_has_an_adapter(name: str, http: httpx.Client) -> None:
    scenario = CATALOGUE[name]
    adapters = scenario.make_adapters(http)
    assert scenario.workflow.services <= set(adapters)
    for service, adapter in adapters.items():
        assert adapter.service == service


@pytest.mark.parametrize("name", ALL)
def test_business_keys_are_unique_per_run(name: str) -> None:
    scenario = CATALOGUE[name]
    first = scenario.expected_effects(scenario.make_input("run-a"))
    second = scenario.expected_effects(scenario.make_input("run-b"))
    assert not {(e.service, e.business_key) for e in first} & {
        (e.service, e.business_key) for e in second
    }


def _ended_clean(history: History) -> None:
    scenario = CATALOGUE[history.scenario]
    assert history.final_status == scenario.expected_status, history.final_reason
    for effect in history.expected:
        assert times_applied(history, effect) == 1, (effect, history.applied)


@pytest.mark.parametrize("name", ALL)
def test_clean_run_ends_in_expected_status_with_each_effect_once(name: str, world: World) -> None:
    _ended_clean(run(world, CATALOGUE[name], "clean"))


def test_runs_of_every_scenario_share_services_without_colliding(world: World) -> None:
    # `run_schedule` resets the services before each run; `Run` alone keeps them, so the
    # journal holds every run of every scenario at the end
    for run_id in ("r1", "r2"):
        for name in ALL:
            schedule = FaultSchedule(scenario=name, run_id=run_id)
            _ended_clean(Run(world, CATALOGUE[name], schedule, REFERENCE).execute())
    journal = world.services.journal
    for service in ("payments", "cms", "publisher", "artifacts", "mailer"):
        counts = journal.effects_by_business_key(service)
        assert counts and all(count == 1 for count in counts.values()), (service, counts)
