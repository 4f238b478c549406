"""The kill-switch: the boundary hook of one worker, deciding where that worker dies.

It counts hits per (step, boundary), records each one with its stable identity, applies the
schedule's clock jumps, and at the scheduled hit either raises `Killed` (in-process tier: a
`BaseException`, so no `except Exception` in an engine can swallow it) or sends the process
`SIGKILL` (real tier: no cleanup of any kind can run).

An in-process death must be as final as a SIGKILL. A framework may call a hook on a thread of
its own, and catch or wrap what it raises there while the worker's thread goes on; so a switch,
once fired, stays dead (`dead`): every later hit, on any thread, raises the same death again,
and the runner treats a worker whose switch fired as killed even if its call returned.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from killpoint.contract.clock import Clock
from killpoint.harness.schedule import FaultSchedule, HitPoint


class Killed(BaseException):
    """An injected process death. Deriving from BaseException keeps `except Exception` out."""

    def __init__(self, point: HitPoint) -> None:
        super().__init__(point.label())
        self.point = point


@dataclass(frozen=True)
class Hit:
    worker: int
    step: str | None
    boundary: str
    occurrence: int
    time: float

    def point(self) -> HitPoint:
        return HitPoint(
            worker=self.worker, step=self.step, boundary=self.boundary, occurrence=self.occurrence
        )


Death = Literal["raise", "sigkill"]

# The process groups of engines this process runs as commands (`harness.engines.command`): a
# death is SIGKILL of the worker's whole group, so in the real tier they go first, then itself.
_BOUND_GROUPS: set[int] = set()


def die_with(group: int) -> None:
    """Process group `group` dies when a switch of this process sends SIGKILL."""
    _BOUND_GROUPS.add(group)


def released(group: int) -> None:
    """Process group `group` has ended: a later death need not send it anything."""
    _BOUND_GROUPS.discard(group)


def latched(hook: object) -> Killed | None:
    """The death a worker's hook (its switch, or its pair's hook around it) has delivered, or
    been latched with by a timeout; None while the worker lives."""
    switch = getattr(hook, "switch", hook)
    dead = getattr(switch, "dead", None)
    return dead if isinstance(dead, Killed) else None


class KillSwitch:
    """The `BoundaryHook` of worker number `worker` under a fault schedule."""

    def __init__(
        self,
        worker: int,
        schedule: FaultSchedule,
        clock: Clock,
        record: Callable[[Hit], None],
        *,
        death: Death = "raise",
        advance: Callable[[float], None] | None = None,
    ) -> None:
        self.worker = worker
        self.clock = clock
        self.record = record
        self.death = death
        self.advance = advance
        self._counts: Counter[tuple[str | None, str]] = Counter()
        self._crashes = {(c.step, c.boundary, c.occurrence) for c in schedule.crash_in(worker)}
        self._jumps = {
            (j.at.step, j.at.boundary, j.at.occurrence): j.seconds
            for j in schedule.clock_jumps
            if j.at.worker == worker
        }
        self._step: str | None = None
        self.dead: Killed | None = None  # the death this switch delivered, once it has

    def kill(self, point: HitPoint) -> Killed:
        """Latch a death (also the runner's, for a worker that hangs): every later hit raises."""
        if self.dead is None:
            self.dead = Killed(point)
        return self.dead

    def __call__(self, boundary: str, step: str | None = None) -> None:
        if step is not None:
            self._step = step
        self._hit(boundary, step)

    def transport(self, boundary: str) -> None:
        """A hit observed at the HTTP transport: it belongs to the step in progress."""
        self._hit(boundary, self._step)

    def _hit(self, boundary: str, step: str | None) -> None:
        if self.dead is not None:  # the worker is dead: nothing of it may act, on any thread
            raise Killed(self.dead.point)
        key = (step, boundary)
        self._counts[key] += 1
        occurrence = self._counts[key]
        self.record(Hit(self.worker, step, boundary, occurrence, self.clock.now()))
        jump = self._jumps.get((step, boundary, occurrence))
        if jump is not None and self.advance is not None:
            self.advance(jump)
        if (step, boundary, occurrence) in self._crashes:
            point = HitPoint(
                worker=self.worker, step=step, boundary=boundary, occurrence=occurrence
            )
            if self.death == "sigkill":
                for group in list(_BOUND_GROUPS):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(group, signal.SIGKILL)
                os.kill(os.getpid(), signal.SIGKILL)
            raise self.kill(point)
