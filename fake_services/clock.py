"""The injected clock the fake services read instead of wall time.

Time-dependent behaviour (eventual visibility, the ``time`` column of the journal) must be
replayable: a fault schedule that says "the clock jumps 30 s" has to give the same ground truth
on every run. So no service logic calls ``time.time()``; it asks a :class:`ServiceClock` that
tests, the harness or the real-tier admin endpoint set explicitly.
"""

from __future__ import annotations

import threading


class ServiceClock:
    """A settable clock in seconds. Starts at ``start`` and moves only when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def set(self, t: float) -> None:
        with self._lock:
            self._now = float(t)

    def advance(self, dt: float) -> float:
        """Move the clock forward by ``dt`` seconds and return the new time."""
        if dt < 0:
            raise ValueError(f"a clock only moves forward; got dt={dt}")
        with self._lock:
            self._now += dt
            return self._now

    def __repr__(self) -> str:
        return f"ServiceClock(now={self.now()!r})"
