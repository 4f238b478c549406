"""The scenario catalogue: every workflow the campaigns crash, by name.

A campaign asks for scenarios by name (`get("order_saga")`) or walks `CATALOGUE`. Each entry is a
`Scenario`: the workflow, a per-run input maker (runs share one store and one set of services, so
business keys carry the run id), the adapters, and the effects the services should show.
"""

from __future__ import annotations

from killpoint.harness.contract.errors import KillpointError
from killpoint.scenarios import (
    approval_refund,
    batch,
    email,
    expensive_reuse,
    handoff,
    order_saga,
    research_publish,
)
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.base import ExpectedEffect, GatePolicy, Scenario

__all__ = ["CATALOGUE", "ExpectedEffect", "GatePolicy", "Scenario", "adapters_for", "get"]

CATALOGUE: dict[str, Scenario] = {
    s.name: s
    for s in (
        research_publish.SCENARIO,
        research_publish.THIN_DRAFT_SCENARIO,
        order_saga.SCENARIO,
        order_saga.REFUND_SCENARIO,
        approval_refund.SCENARIO,
        handoff.SCENARIO,
        handoff.INCOMPATIBLE_SCENARIO,
        batch.SCENARIO,
        email.SCENARIO,
        expensive_reuse.SCENARIO,
    )
}


def get(name: str) -> Scenario:
    """The scenario called `name`; a `KillpointError` naming the known ones otherwise."""
    try:
        return CATALOGUE[name]
    except KeyError:
        known = ", ".join(sorted(CATALOGUE))
        raise KillpointError(f"no scenario named {name!r}; known: {known}") from None
