"""The oracle: invariants every run must satisfy, each judged over a `History` alone.

Each checker returns a `Verdict`: valid true, false, or unknown when the history lacks the
evidence (an engine that does not report budgets, say), with the smallest evidence that proves a
violation. Checkers read only the history and the scenario's spec, never the engine, so they
judge an engine we do not own exactly as they judge ours.
"""

from __future__ import annotations

from collections.abc import Callable

from killpoint.harness.checkers.authority import check_authority
from killpoint.harness.checkers.budget import check_budget
from killpoint.harness.checkers.completion import check_verified_completion
from killpoint.harness.checkers.progress import check_progress
from killpoint.harness.checkers.sequence import check_sequence
from killpoint.harness.checkers.single_effect import check_single_effect
from killpoint.harness.contract.workflow import Workflow
from killpoint.harness.history import History
from killpoint.harness.results import Verdict

Checker = Callable[[History, Workflow], Verdict]

CHECKERS: dict[str, Checker] = {
    "single_effect": check_single_effect,
    "monotonic_sequence": check_sequence,
    "budget_preserved": check_budget,
    "authority": check_authority,
    "verified_completion": check_verified_completion,
    "progress": check_progress,
}


def check_all(history: History, workflow: Workflow) -> list[Verdict]:
    return [checker(history, workflow) for checker in CHECKERS.values()]


__all__ = ["CHECKERS", "Checker", "check_all"]
