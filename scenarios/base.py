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

from killpoint.fake_services.journal import AppliedEffect, Journal
from killpoint.harness.contract.adapters import EffectAdapter
from killpoint.harness.contract.records import BudgetLimits, RunStatus
from killpoint.harness.contract.workflow import Workflow


@dataclass(frozen=True)
class ExpectedEffect:
    """One logical external action the workflow should cause once, named the service's way.

    Some keys exist only once an earlier effect happened: a refund's business key is the id of
    the charge it refunds. Such an effect names its `parent`; `key_in` reads the real key from
    the services' journal, and `business_key` is then only a readable label.
    """

    service: str
    business_key: str
    irreversible: bool = False
    operation: str | None = None  # the service's operation, where one service has several
    parent: ExpectedEffect | None = None  # the business key is the resource this one created

    def key_in(self, journal: Journal) -> str | None:
        """The business key as the journal records it; None while the parent is missing."""
        if self.parent is None:
            return self.business_key
        parent_key = self.parent.key_in(journal)
        if parent_key is None:
            return None
        made = [
            e
            for e in journal.applied_effects(self.parent.service, parent_key)
            if self.parent.operation in (None, e.operation)
        ]
        return made[0].resource_id if made else None

    def applied(self, journal: Journal) -> list[AppliedEffect]:
        """Every time the service really applied this effect (the oracle wants exactly one)."""
        key = self.key_in(journal)
        if key is None:
            return []
        return [
            e
            for e in journal.applied_effects(self.service, key)
            if self.operation in (None, e.operation)
        ]

    verifiable: bool = True  # a read can prove it (the oracle demands one before completion)
    gate: str | None = None  # the approval gate that must be valid when it is requested


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
