"""The operator view: the dispatcher's next action per effect and a reason for every block."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, InProcessServices
from killpoint.harness.cli import known_services
from killpoint.harness.contract import boundaries as b
from killpoint.harness.contract.clock import FakeClock
from killpoint.harness.contract.records import BudgetLimits
from killpoint.harness.engine.operator_view import build_view
from killpoint.harness.engine.store import Store
from killpoint.harness.killswitch import Killed
from tests.conftest import TEST_KEY
from tests.harness.conftest import NewWorker
from tests.harness.flows import kill_at

KEY = TEST_KEY.encode()


@dataclass
class Flags:
    idempotent: bool
    queryable: bool
    irreversible: bool


def test_an_irreversible_effect_that_cannot_be_asked_is_escalated(
    new_worker: NewWorker, services: InProcessServices, store: Store, clock: FakeClock
) -> None:
    services.set_plan(
        FaultPlan.of(FaultRule(service="mailer", operation="send", mode=FaultMode.LOST_RESPONSE))
    )
    new_worker().run("notify", "wf-1", {"to": "ops@example.test"})

    view = build_view(store, "wf-1", key=KEY, now=clock.now(), services=known_services())

    [effect] = view.effects
    assert (effect.status, effect.action) == ("needs_review", "escalate")
    assert any(r.startswith("needs review: mailer send: outcome unknown") for r in view.blocked)
    assert view.checkpoint is not None and view.checkpoint.pending[0].kind == "review"


def test_the_action_follows_the_service_flags(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    with contextlib.suppress(Killed):
        new_worker(hook=kill_at(clock, b.STARTED_COMMITTED, "create_post")).run(
            "publish", "wf-1", {"slug": "s", "title": "t"}
        )
    cases = [
        (Flags(idempotent=False, queryable=True, irreversible=False), "reconcile"),
        (Flags(idempotent=True, queryable=False, irreversible=False), "retry"),
        (Flags(idempotent=False, queryable=False, irreversible=True), "escalate"),
    ]
    for flags, action in cases:
        view = build_view(store, "wf-1", key=KEY, now=clock.now(), services={"cms": flags})
        assert view.unresolved[0].action == action
    unknown = build_view(store, "wf-1", key=KEY, now=clock.now())
    assert "escalate to review if cms cannot be asked" in unknown.unresolved[0].action_detail


def test_a_completed_run_shows_its_receipts_and_no_next_transition(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    new_worker().run("publish", "wf-1", {"slug": "s", "title": "t"})
    view = build_view(store, "wf-1", key=KEY, now=clock.now())
    [effect] = view.effects
    assert effect.receipt is not None and effect.action == "none"
    assert view.next_transitions == ()
    assert view.blocked == ("completed: no next transition",)
    assert not view.lease.live


def test_an_exhausted_budget_is_the_reason_for_the_block(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    new_worker().run("pure", "wf-1", {}, BudgetLimits(steps=1))
    view = build_view(store, "wf-1", key=KEY, now=clock.now())
    assert view.blocked == ("budget exhausted: steps budget exhausted",)
    assert view.budget.steps_left == 0
