"""Every catalogued scenario is well formed and ends as it says on a clean run."""

from __future__ import annotations

import pytest

from killpoint import scenarios
from killpoint.harness.contract.errors import KillpointError
from killpoint.harness.ground_truth import applied
from killpoint.harness.scenario import Scenario
from killpoint.scenarios import CATALOGUE
from tests.scenarios.conftest import Harness

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
def test_every_service_a_workflow_uses_has_an_adapter(name: str, harness: Harness) -> None:
    scenario = CATALOGUE[name]
    adapters = scenario.make_adapters(harness.http)
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


def _run_clean(harness: Harness, scenario: Scenario, run_id: str) -> None:
    workflow_id, inp = harness.start(scenario, run_id)
    outcome = harness.drive(scenario, workflow_id)
    assert outcome.status is scenario.expected_status, outcome.reason
    for effect in scenario.expected_effects(inp):
        seen = applied(effect, harness.services.journal)
        assert len(seen) == 1, (effect, seen)


@pytest.mark.parametrize("name", ALL)
def test_clean_run_ends_in_expected_status_with_each_effect_once(
    name: str, harness: Harness
) -> None:
    _run_clean(harness, CATALOGUE[name], "clean")


def test_runs_of_every_scenario_share_services_without_colliding(harness: Harness) -> None:
    for run in ("r1", "r2"):
        for name in ALL:
            _run_clean(harness, CATALOGUE[name], run)
    for service in ("payments", "cms", "publisher", "artifacts", "mailer"):
        counts = harness.services.journal.effects_by_business_key(service)
        assert all(count == 1 for count in counts.values()), (service, counts)
