"""Fixtures: fresh in-process services per test, a rule builder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, InProcessServices


@pytest.fixture
def services() -> Iterator[InProcessServices]:
    with InProcessServices() as running:
        yield running


@pytest.fixture
def http(services: InProcessServices) -> Iterator[httpx.Client]:
    with services.client(timeout=1.0) as client:
        yield client


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
