"""Time as an injected dependency.

Engine logic never reads the wall clock: leases, approvals and time budgets are judged against a
`Clock`, so a campaign can jump time (expire a lease while its holder is paused, let an approval
lapse during downtime) and replay the same run exactly.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """The clock an engine reads and waits on (`WorkerEnv.clock`). In a campaign it is the
    world's clock, which the harness moves for a downtime or a clock jump: an engine that reads
    the wall clock instead misses both, and says so with `CLOCK` in `EngineSpec.lacks`."""

    def now(self) -> float:
        """Seconds since the epoch on this clock."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` on this clock (a backoff between verify reads, say)."""
        ...


class SystemClock:
    """The real clock, for production use of the engine."""

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class FakeClock:
    """A clock that moves only when told to; `sleep` advances it instantly."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock only moves forward")
        self._now += seconds

    def set(self, t: float) -> None:
        if t < self._now:
            raise ValueError("a clock only moves forward")
        self._now = t
