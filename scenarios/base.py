"""What a scenario is: a workflow, its input, its adapters, and what the world should show.

A scenario is the harness's unit of work. Everything the oracle needs to judge a run that does
not come from the engine comes from here: which effects the workflow is *meant* to cause (by
service and business key), and how the harness plays the human at each approval gate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx
from pydantic import JsonValue

from harness.adapters import EffectAdapter
from harness.budget import BudgetLimits
from harness.model import RunStatus
from harness.workflow import Workflow


@dataclass(frozen=True)
class ExpectedEffect:
    """One logical external action the workflow should cause once, named the service's way."""

    service: str
    business_key: str
    irreversible: bool = False


@dataclass(frozen=True)
class GatePolicy:
    """How the harness answers an approval request at one gate."""

    actor: str = "operator@example.test"
    ttl_s: float = 3600.0


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    workflow: Workflow
    make_input: Callable[[str], Mapping[str, JsonValue]]
    make_adapters: Callable[[httpx.Client], Mapping[str, EffectAdapter]]
    expected_effects: Callable[[Mapping[str, JsonValue]], tuple[ExpectedEffect, ...]]
    limits: BudgetLimits = field(default_factory=BudgetLimits)
    gates: Mapping[str, GatePolicy] = field(default_factory=dict)
    expected_status: RunStatus = RunStatus.COMPLETED
