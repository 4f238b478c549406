"""Raw measures of one run, read off its history (aggregated into metrics by `reports`)."""

from __future__ import annotations

from collections import Counter

from killpoint.contract.records import is_terminal
from killpoint.harness.checkers.deploy_outcome import deploy_outcome, strategic
from killpoint.harness.checkers.ground_truth import is_mutation
from killpoint.harness.history import History
from killpoint.harness.results import RunMeasures, Verdict


def measure(history: History, verdicts: list[Verdict]) -> RunMeasures:
    deaths = history.deaths
    first_death = deaths[0] if deaths else None
    resumed = first_death is not None and any(
        w.worker > first_death.worker for w in history.workers
    )
    terminal = is_terminal(history.final_status)
    recovery_steps = 0
    recovery_clock = recovery_wall = 0.0
    if first_death is not None:
        recovery_steps = sum(1 for h in history.hits if h.worker > first_death.worker)
        later = [w for w in history.workers if w.worker > first_death.worker]
        if later:
            recovery_clock = later[-1].ended_at - first_death.ended_at
            recovery_wall = sum(w.wall_s for w in later)
    groups = Counter((a.service, a.operation, a.business_key) for a in history.applied)
    budget_ok = all(v.valid is not False for v in verdicts if v.checker == "budget_preserved")
    return RunMeasures(
        deaths=len(deaths),
        workers=len(history.workers),
        resumed=resumed,
        recovered=resumed and terminal,
        recovery_steps=recovery_steps,
        recovery_clock_s=recovery_clock,
        recovery_wall_s=recovery_wall,
        checkpoints=len(history.checkpoints),
        steps=sum(1 for h in history.hits if h.boundary == "step.begin"),
        store_rows=len(history.checkpoints) + len(history.effects),
        store_bytes=sum(c.size or 0 for c in history.checkpoints),
        duplicate_effects=sum(n - 1 for n in groups.values() if n > 1),
        downstream_attempts=sum(1 for r in history.requests if is_mutation(r)),
        needs_review=history.final_status == "needs_review",
        within_budget=budget_ok and history.final_status != "budget_exhausted",
        unresolved_effect_age_s=_unresolved_age(history),
        migration_failures=int(
            history.final_status == "quarantined" and "schema" in history.final_reason
        ),
        deploy_strategy=deploy.strategy if (deploy := strategic(history)) else None,
        deploy_outcome=deploy_outcome(history),
    )


def _unresolved_age(history: History) -> float | None:
    """Clock time from a death to the reconciliation of the effect it left in doubt."""
    ages = []
    for death in history.deaths:
        resolved = next(
            (
                h
                for h in history.hits
                if h.worker > death.worker and h.boundary == "reconcile.resolved"
            ),
            None,
        )
        if resolved is not None:
            ages.append(resolved.time - death.ended_at)
    return max(ages) if ages else None
