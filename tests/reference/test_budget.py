"""Durable budgets: a crash never resets them, and an exhausted one stops the run with a reason."""

from __future__ import annotations

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import BudgetLimits, RunStatus
from killpoint.fake_services import InProcessServices
from killpoint.harness.run.killswitch import Killed
from killpoint.reference.budget import after_step, at_time, exhausted_at, initial_budget
from killpoint.reference.checkpoint import Budget, Checkpoint, open_checkpoint
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import kill_at

KEY = TEST_KEY.encode()
POST = {"slug": "budgeted", "title": "Budget"}


def latest(store: Store, workflow_id: str) -> Checkpoint:
    return open_checkpoint(store.checkpoints(workflow_id)[-1], KEY, "default")


def test_budget_arithmetic() -> None:
    budget = initial_budget(BudgetLimits(attempts=3, steps=4, cost=5, time_s=6))
    assert budget == Budget(attempts_left=3, steps_left=4, cost_left=5, time_left_ms=6000)
    spent = after_step(budget, steps=1, cost=2, attempts_left=0, deadline=10.0, now=9.0)
    assert (spent.steps_left, spent.cost_left, spent.attempts_left) == (3, 3, 0)
    assert (spent.time_left_ms, spent.exhausted()) == (1000, "attempts")
    assert at_time(budget, deadline=10.0, now=9.5).time_left_ms == 500
    assert budget.exhausted() is None


def test_the_budget_after_a_crash_is_the_budget_before_it_minus_what_was_spent(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.RESPONSE_READ, "create_post")).run("publish", "wf-1", POST)
    before = latest(store, "wf-1").budget  # committed after `draft`, before the crash
    assert store.workflow("wf-1").attempts_left == before.attempts_left - 1  # spent durably

    clock.advance(31)
    outcome = new_worker().resume("wf-1")

    assert outcome.status is RunStatus.COMPLETED
    after = latest(store, "wf-1").budget
    # create_post and verify_post ran (2 steps, cost 1 each); one attempt was sent, ever.
    assert after.attempts_left == before.attempts_left - 1
    assert after.steps_left == before.steps_left - 2
    assert after.cost_left == before.cost_left - 2
    assert after.time_left_ms <= before.time_left_ms - 31_000
    record = store.workflow("wf-1")
    assert (record.attempts_left, record.steps_left, record.cost_left) == (
        after.attempts_left,
        after.steps_left,
        after.cost_left,
    )


def test_repeated_crashes_cannot_reset_the_attempts_budget(
    new_worker: NewWorker, services: InProcessServices, store: Store, clock: FakeClock
) -> None:
    limits = BudgetLimits(attempts=2)
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.STARTED_COMMITTED, "create_post")).run(
            "publish", "wf-1", POST, limits
        )
    clock.advance(31)
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.STARTED_COMMITTED, "create_post")).resume("wf-1")
    clock.advance(31)

    outcome = new_worker().resume("wf-1")

    assert (outcome.status, outcome.reason) == (
        RunStatus.BUDGET_EXHAUSTED,
        "attempts budget exhausted",
    )
    assert store.workflow("wf-1").attempts_left == 0
    assert [r.operation for r in services.journal.requests("cms")] == ["posts_by_slug"] * 2
    assert latest(store, "wf-1").status is RunStatus.BUDGET_EXHAUSTED


def test_the_steps_budget_stops_the_run_with_the_reason(new_worker: NewWorker) -> None:
    outcome = new_worker().run("pure", "wf-1", {}, BudgetLimits(steps=1))
    assert (outcome.status, outcome.state, outcome.reason) == (
        RunStatus.BUDGET_EXHAUSTED,
        "planned",
        "steps budget exhausted",
    )


def test_the_time_budget_runs_on_the_injected_clock_across_downtime(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    new_worker().start("pure", "wf-1", {}, BudgetLimits(time_s=10))
    clock.advance(11)
    outcome = new_worker().resume("wf-1")
    assert (outcome.status, outcome.reason) == (RunStatus.BUDGET_EXHAUSTED, "time budget exhausted")
    assert latest(store, "wf-1").budget.time_left_ms < 0


def test_exhaustion_now_is_that_of_the_budget_at_this_time() -> None:
    budget = initial_budget(BudgetLimits(attempts=3, steps=4, cost=5, time_s=6))
    for now in (0.0, 9.9994, 9.9996, 10.0, 11.0):
        assert exhausted_at(budget, 10.0, now) == at_time(budget, 10.0, now).exhausted()
    spent = after_step(budget, steps=4, cost=0, attempts_left=3, deadline=10.0, now=11.0)
    assert exhausted_at(spent, 10.0, 11.0) == "steps"  # the first limit, as exhausted() says
