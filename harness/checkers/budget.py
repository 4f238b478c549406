"""Budget preserved: budgets only decrease along the lineage, whatever crashed in between, and
the services never saw more attempts than the budget allowed.

Two halves with their own evidence. The lineage half reads the budget each trusted checkpoint
carries: without a history reader, or with a trusted checkpoint that carries none, it cannot
say the budget never grew. The journal half counts the attempts the services saw; it judges
any engine, but under duplicated deliveries a count over the budget proves nothing (the copies
are the network's, not the engine's), so it is then unknown. Either half proving a violation
is false; otherwise either half lacking evidence is unknown.
"""

from __future__ import annotations

from killpoint.contract.records import BudgetLimits
from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import (
    cite_request,
    is_mutation,
    ok,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.history import History
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "budget_preserved"
FIELDS = ("attempts_left", "steps_left", "cost_left", "time_left_ms")


def check_budget(history: History, workflow: Workflow) -> Verdict:
    trusted = sorted((c for c in history.checkpoints if c.trusted), key=lambda c: c.sequence)
    grew = _growth(history.limits, [c for c in trusted if c.budget])
    if grew is not None:
        return grew
    limits = history.limits
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
    if len(sends) > limits.attempts:
        return unknown(
            NAME,
            f"the services saw {len(sends)} deliveries, more than the {limits.attempts} "
            "attempts allowed, but the network duplicated some: the engine's count is unknown",
        )
    missing = _missing_budgets(history, trusted)
    if missing is not None:
        return unknown(NAME, missing)
    return ok(NAME, f"{len(sends)} attempt(s) within {limits.attempts}; budgets never grew")


def _growth(limits: BudgetLimits, cps: list[CheckpointRecord]) -> Verdict | None:
    """The first budget field that went up along the lineage (a restart reset it), if any."""
    previous: dict[str, float] = {
        "attempts_left": limits.attempts,
        "steps_left": limits.steps,
        "cost_left": limits.cost,
        "time_left_ms": limits.time_s * 1000,
    }
    previous_label = "the budget limits"
    for cp in cps:
        budget = cp.budget or {}
        for field in FIELDS:
            if field in budget and budget[field] > previous[field] + 1e-6:
                return violated(
                    NAME,
                    f"{field} went up from {previous[field]:g} to {budget[field]:g} at "
                    f"checkpoint #{cp.sequence}: a restart reset the budget",
                    [
                        f"{previous_label}: {field}={previous[field]:g}",
                        f"checkpoint #{cp.sequence} ({cp.state}): {field}={budget[field]:g}",
                    ],
                    [EvidenceRef(kind="checkpoint", index=cp.sequence)],
                )
        previous = {f: budget.get(f, previous[f]) for f in FIELDS}
        previous_label = f"checkpoint #{cp.sequence}"
    return None


def _missing_budgets(history: History, trusted: list[CheckpointRecord]) -> str | None:
    """Why the lineage half cannot say the budget never grew, if it cannot."""
    if not history.readable:
        return "the engine exposes no history reader: no budget is visible"
    if not trusted:
        return "no trusted checkpoint carries a budget"
    bare = [c.sequence for c in trusted if not c.budget]
    if bare:
        return f"trusted checkpoint #{bare[0]} carries no budget"
    return None
