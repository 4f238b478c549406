"""The deploy campaign's table: per strategy, what became of the runs a deploy found in flight.

Read off each run's measures (`RunMeasures.deploy_strategy`, `deploy_outcome`): how many runs
were deployed around, and how many finished on the old version (drain), migrated, coexisted
with the new version, were refused a migration (quarantined for an operator), or were done
before the deploy reached them; with the runs the oracle judged false.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from killpoint.harness.results import CampaignResult

STRATEGIES = ("drain", "migrate", "coexist")


@dataclass(frozen=True)
class DeployRow:
    strategy: str
    deployed: int
    finished_on_old: int
    migrated: int
    coexisted: int
    refused: int
    untouched: int  # done before the deploy reached it
    by_policy: int  # of a third (legacy) version: the compatibility policy decided
    undecided: int  # acted on after the deploy with no decision recorded (a violation)
    violations: int


def deploy_rows(result: CampaignResult) -> list[DeployRow]:
    """One row per strategy the campaign deployed with, in the seed's order."""
    outcomes: dict[str, Counter[str]] = {}
    for run in result.runs:
        strategy = run.measures.deploy_strategy
        if strategy is None:
            continue
        counts = outcomes.setdefault(strategy, Counter())
        counts["deployed"] += 1
        counts[run.measures.deploy_outcome or "undecided"] += 1
        counts["violations"] += run.valid is False
    order = [s for s in STRATEGIES if s in outcomes] + sorted(set(outcomes) - set(STRATEGIES))
    return [
        DeployRow(
            strategy=s,
            deployed=outcomes[s]["deployed"],
            finished_on_old=outcomes[s]["finished_on_old"],
            migrated=outcomes[s]["migrated"],
            coexisted=outcomes[s]["coexisted"],
            refused=outcomes[s]["refused"],
            untouched=outcomes[s]["untouched"],
            by_policy=outcomes[s]["by_policy"],
            undecided=outcomes[s]["undecided"],
            violations=outcomes[s]["violations"],
        )
        for s in order
    ]


def deploy_summary(rows: list[DeployRow]) -> str | None:
    """One line for a console: each strategy's runs and what became of them; None without."""
    if not rows:
        return None
    ends = ("finished_on_old", "migrated", "coexisted", "refused", "by_policy", "undecided")
    parts = []
    for row in rows:
        shown = [f"{getattr(row, e)} {e.replace('_', ' ')}" for e in ends if getattr(row, e)]
        parts.append(f"{row.strategy} {row.deployed} ({', '.join(shown) or 'none in flight'})")
    return "deploys: " + "; ".join(parts)
