"""A fault-plan builder for the tests of the fake services."""

from __future__ import annotations

from typing import Any

from killpoint.fake_services import FaultMode, FaultPlan, FaultRule


def plan(*rules: dict[str, Any]) -> FaultPlan:
    return FaultPlan(rules=tuple(FaultRule.model_validate(rule) for rule in rules))


def rule(
    service: str,
    operation: str | None,
    mode: FaultMode | str,
    occurrence: int | None = 1,
    **params: Any,
) -> dict[str, Any]:
    return {
        "service": service,
        "operation": operation,
        "mode": mode,
        "occurrence": occurrence,
        "params": params,
    }
