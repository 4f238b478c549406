"""The operator queue at the end of a campaign: the runs that ended waiting for a person.

Seed 000: "a recovery failure should enter an operator queue with enough evidence to act". The
report shows the campaign's queue as its results have it (the same runs `killpoint queue` lists
on the campaign's store): how many per reason, and the oldest ones with their reasons; then the
runs whose named case played the operator, with the controls it applied or was refused.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from killpoint.harness.results import CampaignResult, RunResult

WAITING = ("needs_review", "quarantined", "budget_exhausted", "dead_lettered")
QUEUE_STORE = "queue.sqlite"  # in the campaign's folder (`harness.engines.reference`)
TENANT = "tenant-a"  # the tenant a campaign's runs belong to (`harness.run.world`)
MAX_QUEUED_ROWS = 40


@dataclass(frozen=True)
class QueueView:
    counts: list[tuple[str, int]]  # (reason, runs), in the order of WAITING
    runs: list[RunResult]  # the first MAX_QUEUED_ROWS of them, in the campaign's order
    omitted: int
    operated: list[RunResult]  # runs whose operator applied (or was refused) a control
    commands: list[str] = field(default_factory=list)  # `killpoint queue` on each queue kept

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)


def queue_view(result: CampaignResult) -> QueueView:
    waiting = [r for r in result.runs if r.final_status in WAITING]
    counted = Counter(r.final_status for r in waiting)
    return QueueView(
        counts=[(reason, counted[reason]) for reason in WAITING if counted[reason]],
        runs=waiting[:MAX_QUEUED_ROWS],
        omitted=max(0, len(waiting) - MAX_QUEUED_ROWS),
        operated=[r for r in result.runs if r.controls][:MAX_QUEUED_ROWS],
        commands=queue_commands(result.campaign_dir),
    )


def queue_commands(folder: str | None) -> list[str]:
    """The `killpoint queue` command of each queue the campaign kept in its folder (one per
    shard of a campaign over several processes), as `killpoint run` prints them; one with a
    `CAMPAIGN` placeholder when the result does not name its folder (older files)."""
    kept = [Path(folder or "CAMPAIGN") / QUEUE_STORE]
    if folder is not None:
        kept = sorted(Path(folder).glob(f"shard-*/{QUEUE_STORE}")) or kept
    return [f"killpoint queue --db sqlite:///{q} --tenant {TENANT}" for q in kept]
