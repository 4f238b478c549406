"""What a recording shows: the boundary hits, the requests and the risk of a crash at each hit.

The plan (`plan`) and the exploration (`explore`) both draw from it: a scenario's
fault-free recording names the hits a first worker meets, the mutating requests it sends and
how risky a crash at each hit is; a single crash's recovery names the hits only a recovering
worker meets. Pure functions of histories, no world, no I/O.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from killpoint.contract import boundaries as b
from killpoint.fake_services.faults import FaultMode
from killpoint.harness.checkers.ground_truth import MUTATIONS
from killpoint.harness.history import History, HitRecord
from killpoint.harness.schedule import FaultSchedule, HitPoint

# Which network faults a mutating request may meet; duplicate delivery only where the service
# dedups (a non-idempotent service duplicates any duplicated request, whatever the engine does).
NETWORK_MODES = (
    FaultMode.LOST_RESPONSE,
    FaultMode.TIMEOUT_BEFORE_COMMIT,
    FaultMode.ERROR_AFTER_COMMIT,
    FaultMode.ERROR_BEFORE_COMMIT,
    FaultMode.LOST_REQUEST,
)
DEDUPING = frozenset({("payments", "create_charge"), ("payments", "refund"), ("artifacts", "put")})


def network_modes(service: str, operation: str) -> tuple[FaultMode, ...]:
    """The network faults a mutating request of (service, operation) may meet."""
    extra = (FaultMode.DUPLICATE_DELIVERY,) if (service, operation) in DEDUPING else ()
    return (*NETWORK_MODES, *extra)


class Risk(IntEnum):
    """How likely a crash at a boundary hit is to expose a recovery bug; lower runs first."""

    DELIVERED = 0  # a mutating request reached a service since the previous hit
    PROTOCOL = 1  # the effect protocol, recovery, artifacts, approvals, handoffs; or unknown
    ROUTINE = 2  # between steps: lease, step begin, checkpoint built and committed, reads


# Boundaries between steps, or where a step has only read or computed so far: a crash there
# leaves the durable state a step boundary leaves. Any boundary not listed here, one added
# tomorrow or another engine's own names included, is crashed with the effect protocol's.
ROUTINE = frozenset(
    {
        b.LEASE_ACQUIRED,
        b.STEP_BEGIN,
        b.INTENT_BUILT,
        b.VERIFY_READ,
        b.READ_RETURNED,  # a read changed nothing outside: dying after it is dying before
        b.CHECKPOINT_BUILT,
        b.CHECKPOINT_COMMITTED,
    }
)


# Where a worker paused with a lapsed lease can still act on the world when it wakes: the next
# thing it does is not (only) a write to its own store, which the fence refuses, but something
# decided before the pause and done outside — the send after `started` is committed (no store
# guards the service), a write decided on a read's answer, a resend decided on a reconciling
# lookup, a receipt (and the next step's send) from a response the new owner may have resolved
# otherwise. Between steps (the lease, a step's begin, a checkpoint) the next action is a fenced
# write, which the pairs at the lease already test (`plan.interleavings`).
CHECKPOINT_DONE = b.CHECKPOINT_COMMITTED  # where a recovery's first step ends
STALE_WINDOWS = frozenset(
    {b.STARTED_COMMITTED, b.READ_RETURNED, b.RECONCILE_LOOKED_UP, b.RESPONSE_READ}
)


@dataclass(frozen=True)
class Recovery:
    """A single crash and the boundary hits its first recovery went through."""

    single: FaultSchedule
    hits: tuple[HitPoint, ...]

    @property
    def name(self) -> str:
        """The single crash's name without its kind: `<n>` for `single-<n>`."""
        return self.single.run_id.removeprefix("single-")

    @property
    def position(self) -> tuple[int, str]:
        """The crashed hit's place in the recording (`single-<n>`); other names first."""
        return (int(self.name), "") if self.name.isdigit() else (-1, self.single.run_id)

    def stale_windows(self) -> list[int]:
        """`stale_windows` of the recovery's hits."""
        return stale_windows(self.hits)


def stale_windows(hits: Sequence[HitPoint | HitRecord]) -> list[int]:
    """The places (numbered from 0) of the hits of a recovery's first step at `STALE_WINDOWS`,
    the last of each run of them in a row.

    The first step only: up to its first checkpoint, the recovery acts from the state the crash
    left (a reconciliation, an effect taken up again); after it, it runs the next steps afresh,
    as the recovery of a crash at their beginning does first. A run of windows in a row (a
    lookup's answer read, then looked up) is one place: nothing the worker does between them
    reaches the world."""
    found: list[int] = []
    for n, hit in enumerate(hits):
        if hit.boundary == CHECKPOINT_DONE:
            break
        if hit.boundary in STALE_WINDOWS:
            if found and found[-1] == n - 1:
                found.pop()
            found.append(n)
    return found


# -- what a recording shows ----------------------------------------------------------------


def point(hit: HitRecord | HitPoint, worker: int = 0) -> HitPoint:
    """The schedule's name for a hit, in worker number `worker`."""
    return HitPoint(worker=worker, step=hit.step, boundary=hit.boundary, occurrence=hit.occurrence)


def first_hits(recording: History) -> list[HitRecord]:
    """The boundary hits of the recording's first worker, in order: what single crashes kill."""
    return [h for h in recording.hits if h.worker == 0]


def recovery_points(history: History, worker: int = 1) -> list[HitPoint]:
    """The boundary hits of one worker of a run (the first recovery by default)."""
    return [point(h, h.worker) for h in history.hits if h.worker == worker]


def recovery(single: FaultSchedule, history: History) -> Recovery:
    """What a single crash's run shows the later phases: the hits of its first recovery (the
    pairs and doubles drawn from it go without the single's neighbours: a sample of runs has
    them, `neighbour_plan`)."""
    alone = single.model_copy(update={"neighbours": ()}) if single.neighbours else single
    return Recovery(alone, tuple(recovery_points(history)))


def recovery_only(first: Sequence[HitPoint], recoveries: Iterable[Recovery]) -> list[HitPoint]:
    """Hits only a recovering worker reaches (reconciliation, say), first seen first, as
    worker 0's hits: what a later worker's crash may be drawn from besides `first`."""
    seen = {(p.step, p.boundary, p.occurrence) for p in first}
    found: list[HitPoint] = []
    for rec in recoveries:
        for hit in rec.hits:
            key = (hit.step, hit.boundary, hit.occurrence)
            if key not in seen:
                seen.add(key)
                found.append(point(hit))
    return found


@dataclass(frozen=True)
class Target:
    """A mutating request the recording saw: `count` requests of (service, operation)."""

    service: str
    operation: str
    count: int

    @property
    def key(self) -> tuple[str, str]:
        return (self.service, self.operation)

    def modes(self) -> tuple[FaultMode, ...]:
        return network_modes(self.service, self.operation)


def targets(recording: History) -> tuple[Target, ...]:
    """The mutating requests of the recording, by (service, operation), in the order first sent."""
    sent = ((r.service, r.operation) for r in recording.requests)
    counts = Counter(target for target in sent if target in MUTATIONS)  # in first-seen order
    return tuple(Target(s, o, n) for (s, o), n in counts.items())


def crash_risk(recording: History) -> list[Risk]:
    """The risk of each hit of the recording's first worker, in the order of the hits.

    A hit right after a mutating request reached a service is the lost-response window (DESIGN
    boundary 5): the outside world has changed and the engine has not recorded it yet, where
    an engine that re-runs the step sends the request twice. Seen from the service's journal,
    it needs nothing from the engine, so it holds for engines we cannot instrument. Then the
    other windows of the effect protocol (intent and `started` committed, response read and
    receipt committed, reconciliation, compensation) and the artifact, approval and handoff
    boundaries; then the routine ones, where the durable state is the one a step boundary
    leaves and a recovery simply runs the next step.
    """
    mutations = sorted(r.seq for r in recording.requests if (r.service, r.operation) in MUTATIONS)
    risks: list[Risk] = []
    seen = -math.inf
    for hit in first_hits(recording):
        delivered = any(seen < seq <= hit.journal_seq for seq in mutations)
        seen = hit.journal_seq
        routine = Risk.ROUTINE if hit.boundary in ROUTINE else Risk.PROTOCOL
        risks.append(Risk.DELIVERED if delivered else routine)
    return risks
