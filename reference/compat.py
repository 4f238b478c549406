"""Version drift: what to do when the runtime differs from the contract that wrote the state.

The seed's rule: store versions and decide compatibility explicitly. Each kind of change maps to
a decision — continue, branch (new lineage, same state, old one kept auditable), restart (new
lineage from the initial state; the ledger still dedups effects by key) or quarantine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from killpoint.contract.records import Versions

Decision = Literal["continue", "branch", "restart", "quarantine"]

_ORDER: dict[Decision, int] = {"continue": 0, "branch": 1, "restart": 2, "quarantine": 3}


@dataclass(frozen=True)
class CompatibilityPolicy:
    on_plan_change: Decision = "quarantine"
    on_prompt_change: Decision = "branch"
    on_model_change: Decision = "branch"
    on_tool_schema_change: Decision = "restart"

    def decide(self, stored: Versions, runtime: Versions) -> tuple[Decision, str]:
        """The strictest decision any changed field calls for, and which fields changed."""
        changes: list[tuple[Decision, str]] = []
        if stored.plan != runtime.plan:
            changes.append((self.on_plan_change, f"plan {stored.plan}→{runtime.plan}"))
        if stored.prompt != runtime.prompt:
            changes.append((self.on_prompt_change, f"prompt {stored.prompt}→{runtime.prompt}"))
        if stored.model_contract != runtime.model_contract:
            changes.append(
                (
                    self.on_model_change,
                    f"model contract {stored.model_contract}→{runtime.model_contract}",
                )
            )
        if stored.tool_schema != runtime.tool_schema:
            changes.append(
                (
                    self.on_tool_schema_change,
                    f"tool schema {stored.tool_schema}→{runtime.tool_schema}",
                )
            )
        if not changes:
            return "continue", ""
        decision = max((d for d, _ in changes), key=_ORDER.__getitem__)
        return decision, ", ".join(why for _, why in changes)
