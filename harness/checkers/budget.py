"""Budget preserved: budgets only decrease along the lineage, whatever crashed in between, and
the services never saw more attempts than the budget allowed."""

from __future__ import annotations

from killpoint.harness.checkers._common import (
    cite_request,
    is_mutation,
    ok,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.contract.workflow import Workflow
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "budget_preserved"
FIELDS = ("attempts_left", "steps_left", "cost_left", "time_left_ms")


def check_budget(history: History, workflow: Workflow) -> Verdict:
    cps = sorted(
        (c for c in history.checkpoints if c.trusted and c.budget), key=lambda c: c.sequence
    )
    limits = history.limits
    initial = {
        "attempts_left": limits.attempts,
        "steps_left": limits.steps,
        "cost_left": limits.cost,
        "time_left_ms": limits.time_s * 1000,
    }
    previous: dict[str, float] = initial
    previous_label = "the budget limits"
    for cp in cps:
        assert cp.budget is not None
        for field in FIELDS:
            if field in cp.budget and cp.budget[field] > previous[field] + 1e-6:
                return violated(
                    NAME,
                    f"{field} went up from {previous[field]:g} to {cp.budget[field]:g} at "
                    f"checkpoint #{cp.sequence}: a restart reset the budget",
                    [
                        f"{previous_label}: {field}={previous[field]:g}",
                        f"checkpoint #{cp.sequence} ({cp.state}): {field}={cp.budget[field]:g}",
                    ],
                    [EvidenceRef(kind="checkpoint", index=cp.sequence)],
                )
        previous = {f: cp.budget.get(f, previous[f]) for f in FIELDS}
        previous_label = f"checkpoint #{cp.sequence}"
    sends = [r for r in history.requests if is_mutation(r) and r.service != "artifacts"]
    duplicated = any(rule.mode == "duplicate_delivery" for rule in history.schedule.network.rules)
    if len(sends) > limits.attempts and not duplicated:
        over = sends[limits.attempts]
        return violated(
            NAME,
            f"the services saw {len(sends)} attempts; the budget allowed {limits.attempts}",
            [f"budget: {limits.attempts} attempts", cite_request(over)],
            request_refs([over]),
        )
    if not cps:
        return unknown(NAME, "no trusted checkpoint carries a budget")
    return ok(NAME, f"{len(sends)} attempt(s) within {limits.attempts}; budgets never grew")
