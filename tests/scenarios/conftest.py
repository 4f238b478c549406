"""How the scenario tests run a workflow: through the product's own runner and kill-switch.

Each test hands `run_schedule` a `World` (the shared `world` fixture: a store on each backend,
in-process services, one clock) and a `FaultSchedule` — where a worker dies (`HitPoint`), which
response the network loses (`FaultPlan`), when the clock jumps — and judges the `History` it
returns, exactly as a campaign would. The harness plays the human at approval gates and restarts
a dead worker after the schedule's downtime (longer than the lease), as `killpoint run` does.
"""

from __future__ import annotations

from typing import Any

import httpx

from killpoint.fake_services import FaultMode, FaultPlan, FaultRule
from killpoint.fake_services.journal import AppliedEffect
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import ExpectedEffectRecord, History
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint


def run(world: World, scenario: Scenario, run_id: str = "run", **schedule: Any) -> History:
    """Run `scenario` once under a schedule made of `schedule`'s fields, on the reference engine."""
    plan = FaultSchedule(scenario=scenario.name, run_id=run_id, **schedule)
    return run_schedule(world, scenario, plan, REFERENCE)


def crash(step: str | None, boundary: str, worker: int = 0, occurrence: int = 1) -> HitPoint:
    """The hit at which worker number `worker` dies."""
    return HitPoint(worker=worker, step=step, boundary=boundary, occurrence=occurrence)


def lose_response(service: str, operation: str) -> FaultPlan:
    """The service applies the first such request, and its response never arrives."""
    rule = FaultRule(
        service=service, operation=operation, occurrence=1, mode=FaultMode.LOST_RESPONSE
    )
    return FaultPlan.of(rule)


def applied(history: History, service: str, business_key: str | None = None) -> list[str]:
    """The operations one service really applied in this run (of one business key, if given)."""
    return [e.operation for e in effects_of(history, service, business_key)]


def effects_of(
    history: History, service: str, business_key: str | None = None
) -> list[AppliedEffect]:
    return [
        e
        for e in history.applied
        if e.service == service and business_key in (None, e.business_key)
    ]


def times_applied(history: History, expected: ExpectedEffectRecord) -> int:
    """How often the services applied an effect the scenario expects (the oracle wants one)."""
    return sum(
        1
        for e in effects_of(history, expected.service, expected.business_key)
        if expected.operation in (None, e.operation)
    )


def client(world: World) -> httpx.Client:
    """A client to the world's services, to read what a run left there."""
    return httpx.Client(base_url=world.services.base_url, transport=world.services.transport())
