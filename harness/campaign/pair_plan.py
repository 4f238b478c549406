"""The plan's runs of two, from each single crash's recovery: two workers recovering at once (the
first paused at its lease, or right after a place where it can still act stale) and a second
crash in the recovery. Each phase takes all of a recovery's hits while they fit the scenario's
share of `double_limit`, a sample seeded by the single beyond it, so a shard makes of its
singles what the whole campaign makes of them. Pure, as `plan` is.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator, Sequence

from killpoint.contract import boundaries as b
from killpoint.harness.campaign.planned import PlannedRun, PlanOptions
from killpoint.harness.campaign.recording import CHECKPOINT_DONE, Recovery, stale_windows
from killpoint.harness.history import HitRecord
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import Interleave

__all__ = ["doubles", "guessed_pauses", "in_hit_order", "interleavings", "pauses", "share"]


def in_hit_order(recoveries: Iterable[Recovery]) -> list[Recovery]:
    """Single crashes and their recoveries in the order of the hits they crashed: paired
    crashes and interleavings follow the first crash's place in the workflow, not its risk,
    since what they add is a second death or worker in the recovery, whose risk the first
    crash's boundary does not tell (two workers after a crash at the lease are where a
    missing fencing token shows)."""
    return sorted(recoveries, key=lambda r: r.position)


def _chosen(
    scenario: Scenario,
    recoveries: Iterable[Recovery],
    options: PlanOptions,
    total: int,
    kind: str,
    among: Callable[[Recovery], list[int]] | None = None,
) -> Iterator[tuple[Recovery, int]]:
    """Per single crash in hit order, which of its recovery's hits (numbered from 0; `among`
    those, if given) to use: all while they fit the scenario's share of `double_limit`, else a
    sample seeded by the single alone, so a shard makes of its singles what the whole campaign
    makes of them."""
    cap = share(options, total)
    for rec in in_hit_order(recoveries):
        chosen = list(range(len(rec.hits))) if among is None else among(rec)
        if len(chosen) > cap:
            salt = "" if kind == "double" else f":{kind}"
            rng = random.Random(f"{options.seed}:{scenario.name}:{rec.single.run_id}{salt}")
            chosen = sorted(rng.sample(chosen, cap))
        yield from ((rec, n) for n in chosen)


def share(options: PlanOptions, total: int) -> int:
    """How many of its recovery's hits each single gets, in each phase drawn from them."""
    return max(1, math.ceil(options.double_limit / (total or 1)))


def guessed_pauses(hits: Sequence[HitRecord]) -> list[int]:
    """Per hit, a guess at the pauses of a recovery from a crash there, before it is seen: the
    windows of the crash's step (`stale_windows`) from the crash on (the effects resolved
    before it are not sent again) and its reads from the step's beginning (a read is made
    again), and a reconciling lookup if the crash left an effect started and not resolved."""
    start, doubt, found = 0, False, []
    for n, hit in enumerate(hits):
        if hit.boundary == CHECKPOINT_DONE:
            start = n + 1
        doubt = hit.boundary in (b.STARTED_COMMITTED, b.RESPONSE_READ) or (
            doubt and hit.boundary != b.RECEIPT_COMMITTED
        )
        again = [
            h for k, h in enumerate(hits[start:], start) if k >= n or h.boundary == b.READ_RETURNED
        ]
        found.append(len(stale_windows(again)) + doubt)
    return found


def doubles(
    scenario: Scenario, recoveries: Iterable[Recovery], options: PlanOptions, singles_total: int
) -> Iterator[PlannedRun]:
    """A second crash in each first recovery, at the j-th hit of that recovery."""
    for rec, j in _chosen(scenario, recoveries, options, singles_total, "double"):
        first = rec.single
        update = {"run_id": f"double-{rec.name}-{j}", "crashes": (*first.crashes, rec.hits[j])}
        yield PlannedRun(scenario, "double", first.model_copy(update=update))


def interleavings(
    scenario: Scenario, recoveries: Iterable[Recovery], options: PlanOptions, singles_total: int
) -> Iterator[PlannedRun]:
    """After a single crash, two workers recover at once: the first takes the lease and is
    paused past its expiry, the second runs k boundary hits (k = 1 .. the recovery's length),
    then the first wakes up and carries on. They are threads of the in-process tier; only for
    an engine that runs one worker per process (DBOS), which cannot have two there, are they
    two worker processes of the real tier."""
    if not options.pairs:
        return
    for rec, n in _chosen(scenario, recoveries, options, singles_total, "pair"):
        pair = Interleave(after_worker=0, switch_at=(0, n + 1), pause_expires_lease=True)
        update = {"run_id": f"pair-{rec.name}-{n + 1}", "interleave": pair}
        yield PlannedRun(scenario, "pair", rec.single.model_copy(update=update))


def pauses(
    scenario: Scenario,
    recoveries: Iterable[Recovery],
    options: PlanOptions,
    singles_total: int,
    started: bool | None = None,
) -> Iterator[PlannedRun]:
    """After a single crash, two workers recover at once, the first paused right after a hit
    where a stale owner can still act (`STALE_WINDOWS`: an effect's `started`, a read, a
    reconciling lookup, a response read before its receipt) and past its lease's expiry; the
    second takes over and runs to its end; then the first wakes up. An engine that checks its
    lease only at its store's writes sends, from `started`, an effect the new owner already
    resolved. A pair per such hit of each recovery (`pause-<single>-<hit>`), as many as the
    pairs at the lease may have (`double_limit`'s share, a sample seeded per single beyond).
    `started` True or False keeps only the pauses at an effect's `started`, or only the others
    (a hunt makes the former first: the one window the store's fence cannot close)."""
    if not (options.pauses and options.pairs):
        return
    chosen = _chosen(scenario, recoveries, options, singles_total, "pause", Recovery.stale_windows)
    for rec, n in chosen:
        if started is not None and (rec.hits[n].boundary == b.STARTED_COMMITTED) != started:
            continue
        pair = Interleave(after_worker=0, switch_at=(n,), pause_expires_lease=True)
        update = {"run_id": f"pause-{rec.name}-{n}", "interleave": pair}
        yield PlannedRun(scenario, "pair", rec.single.model_copy(update=update))
