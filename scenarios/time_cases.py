"""Named cases for time: a downtime longer than the run's time budget, and old checkpoints that
carry a partly spent budget and an approval of every age.

Seed 000, "Budgets and stop conditions": "Carry token, time, cost, retry, and step limits into
the resumed run" — so a run that was down past its deadline stops for its budget rather than
acting late ("Restarting resets safety limits and enables an unbounded loop"), and "Letting
restarts reset limits: attempts, cost, time, and safety budgets belong to durable state".
"Checkpoint schema is old — Migrate through a tested adapter": the v1 engine kept a run's
limits and what it had spent apart (`legacy_v1`), so a migration must subtract one from the
other, and carry the approval's own expiry — whether the approval is fresh, near its expiry
or past it when the run resumes.
"""

from __future__ import annotations

from collections.abc import Callable

from killpoint.harness.history import History
from killpoint.harness.scenario import NamedCase, NotApplicable
from killpoint.harness.schedule import Tamper
from killpoint.scenarios.approval_refund import APPROVAL_TTL_S
from killpoint.scenarios.case_parts import all_of, crash, once, schedule, status_in, unpublished

DAY_S = 86_400.0
LONG_DOWNTIME_S = 2 * DAY_S  # past the default budget of a day (`BudgetLimits.time_s`)
# an approval's age when the run resumes: (name, downtime, approvals the run needs, in words)
AGES = (
    ("fresh", 60.0, 1, "a fresh approval is carried over and used"),
    ("near_expiry", APPROVAL_TTL_S - 120.0, 1, "an approval with two minutes left is still used"),
    ("expired", 2 * APPROVAL_TTL_S, 2, "an expired approval sends the run back to its gate"),
)


def approvals(n: int) -> Callable[[History], str | None]:
    """Exactly `n` approvals given: one more means a valid approval was taken for expired."""
    return lambda h: None if len(h.grants) == n else (
        f"{len(h.grants)} approval(s) given, expected {n}")  # fmt: skip


def keeps_a_budget(h: History) -> str | None:
    """The stop the case expects is a budget's: an engine that keeps none cannot stop for it
    (`deadline_kept` still judges what it sent past the deadline, from the journal)."""
    return NotApplicable("the engine keeps no budget to stop for") if "budget" in h.lacks else None


def _legacy_cases() -> list[NamedCase]:
    return [
        NamedCase(
            f"schema_v1_partly_spent_{age}",
            f"000: Checkpoint schema is old (v1: limits and spend apart, a {age} approval)",
            schedule(
                "approval_refund",
                f"schema_v1_partly_spent_{age}",
                crashes=[crash("refund", "step.begin")],
                tamper=[Tamper(after_worker=0, kind="legacy_v1")],
                downtime_s=downtime,
            ),
            f"Migrate through a tested adapter: the budget left is the limits less what was "
            f"spent, and {words}.",
            all_of(status_in("completed"), approvals(n), once("payments", "refund")),
        )
        for age, downtime, n, words in AGES
    ]


TIME_CASES: tuple[NamedCase, ...] = (
    NamedCase(
        "time_budget_passes_during_downtime",
        "000: Budgets and stop conditions (a downtime longer than the run's time budget)",
        schedule(
            "order_saga",
            "time_budget_passes_during_downtime",
            crashes=[crash("ship", "step.begin")],
            downtime_s=LONG_DOWNTIME_S,
        ),
        "The time budget is durable: the run resumed past its deadline stops for its budget "
        "and ships nothing late.",
        all_of(keeps_a_budget, status_in("budget_exhausted"), unpublished),
    ),
    *_legacy_cases(),
)
