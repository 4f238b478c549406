"""An expected effect names the service's operation: a step's name is refused when it is
written, with the operations the service does apply, not found later as "took effect 0 times"."""

from __future__ import annotations

import pytest

from killpoint import ExpectedEffect
from killpoint.contract.errors import DefinitionError, KillpointError
from killpoint.scenarios import catalogue


def test_the_step_name_instead_of_the_service_operation_is_refused_naming_the_valid_ones() -> None:
    with pytest.raises(DefinitionError) as refused:
        ExpectedEffect("payments", "order-1", operation="charge")
    message = str(refused.value)
    assert "'charge'" in message
    assert "create_charge, refund" in message
    assert isinstance(refused.value, KillpointError)  # one clear line, exit 2 on the CLI


def test_a_read_operation_is_no_effect_operation() -> None:
    with pytest.raises(DefinitionError, match="create_post"):
        ExpectedEffect("cms", "post-1", operation="get_post")


@pytest.mark.parametrize(
    ("service", "operation"),
    [
        ("payments", "create_charge"),
        ("payments", "refund"),
        ("cms", "create_post"),
        ("mailer", "send"),
        ("publisher", "publish"),
        ("artifacts", "put"),
        ("payments", None),
    ],
)
def test_the_services_own_operations_are_accepted(service: str, operation: str | None) -> None:
    assert ExpectedEffect(service, "key", operation=operation).operation == operation


def test_every_catalogue_scenario_names_its_expected_effects_the_services_way() -> None:
    for scenario in catalogue().scenarios.values():
        assert scenario.expected_effects(scenario.make_input("check")) is not None
