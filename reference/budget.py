"""Durable budgets: limits set once at start, spent in the same transaction as the work.

Attempts are spent when an effect is marked `started` (before the request leaves), steps and
cost when a checkpoint commits, and time is a deadline on the injected clock. A restart reads
them back from the store, so repeated crashes cannot turn a bounded run into an endless one.
"""

from __future__ import annotations

from killpoint.contract.records import BudgetLimits
from killpoint.reference.checkpoint import Budget


def initial_budget(limits: BudgetLimits) -> Budget:
    return Budget(
        attempts_left=limits.attempts,
        steps_left=limits.steps,
        cost_left=limits.cost,
        time_left_ms=int(limits.time_s * 1000),
    )


def after_step(
    budget: Budget, *, steps: int, cost: int, attempts_left: int, deadline: float, now: float
) -> Budget:
    """What is left once a step commits: its steps and cost spent, the attempts the store holds
    (spent as each effect started), and the time to the deadline."""
    return Budget(
        attempts_left=attempts_left,
        steps_left=budget.steps_left - steps,
        cost_left=budget.cost_left - cost,
        time_left_ms=round((deadline - now) * 1000),
    )


def exhausted_at(budget: Budget, deadline: float, now: float) -> str | None:
    """Which limit has run out by `now`, if any: `at_time(...).exhausted()` without the copy."""
    for name in ("attempts", "steps", "cost"):
        if getattr(budget, f"{name}_left") <= 0:
            return name
    return "time" if round((deadline - now) * 1000) <= 0 else None


def at_time(budget: Budget, deadline: float, now: float) -> Budget:
    return budget.model_copy(update={"time_left_ms": round((deadline - now) * 1000)})
