"""Two workers recovering at once, in one process: they take turns at boundary hits.

A schedule's `Interleave` names the global hit indices (counted over both workers) after which
the other worker gets the turn. A worker that waits for the other without reaching a boundary
(on a lock or a lease the other holds, or on its result) would stall the pair: after
`PATIENCE` seconds without a hit the waiting one takes the turn back. The two workers are
threads (processes, in the real tier), but a baton lets exactly one run at a time, so an
interleaving is as deterministic as one worker is: the same schedule, the same history. A pause
at a switch may move the clock past the lease ttl, so the waiting worker wakes up holding a
lapsed lease (where a missing fencing token shows).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, MutableSequence
from typing import TYPE_CHECKING, Any

from killpoint.harness.history import WorkerRecord
from killpoint.harness.run.killswitch import KillSwitch

if TYPE_CHECKING:
    from killpoint.harness.run.runner import Run

PATIENCE = 5.0  # wall seconds without a hit after which the waiting worker takes its turn


def run_pair(run: Run, first: int, switch_at: tuple[int, ...], expire: bool) -> list[WorkerRecord]:
    """Two workers recover at once, one at a time, switching after the scheduled hits."""
    baton = Baton(
        set(switch_at), run.world.clock.advance if expire else None, run.world.lease_ttl + 1
    )
    results: list[WorkerRecord] = []

    def body(slot: int) -> None:
        baton.wait_turn(slot)
        try:
            results.append(run.run_worker(first + slot, lambda s: baton.hook(slot, s)))
        finally:
            baton.finish(slot)

    threads = [threading.Thread(target=body, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class PairHook:
    """A paired worker's hook: its switch, then the baton, at every hit — those the engine
    reports and those the harness sees at the transport alike, so two workers can switch
    between a read and the write that depends on it in any engine."""

    def __init__(self, baton: Baton, slot: int, switch: KillSwitch) -> None:
        self.baton, self.slot, self.switch = baton, slot, switch

    def __call__(self, boundary: str, step: str | None = None) -> None:
        self.switch(boundary, step)
        self.baton.after_hit(self.slot)

    def transport(self, boundary: str) -> None:
        self.switch.transport(boundary)
        self.baton.after_hit(self.slot)


class Baton:
    """Lets exactly one of two workers run; hands over at scheduled boundary hits.

    Its state is four numbers (whose turn, hits so far, each worker done) under one condition:
    threads' own for workers in one process, or, made with `across_processes`, in shared
    memory under a process-shared condition, for two forked workers of the real tier."""

    TURN, COUNT, DONE = 0, 1, 2  # state[DONE + slot]: that worker has ended

    def __init__(
        self,
        switch_at: set[int],
        advance: Callable[[float], None] | None,
        pause: float,
        *,
        state: MutableSequence[int] | None = None,
        cond: Any = None,
    ) -> None:
        self.switch_at = switch_at
        self.advance = advance
        self.pause = pause
        self.state: MutableSequence[int] = [0, 0, 0, 0] if state is None else state
        self.cond = threading.Condition() if cond is None else cond
        self._seen = -1  # the hit count when a waiting worker last looked

    @classmethod
    def across_processes(
        cls, switch_at: set[int], advance: Callable[[float], None] | None, pause: float
    ) -> Baton:
        """A baton two forked children share: made before the fork, inherited by both."""
        ctx = multiprocessing.get_context("fork")
        return cls(switch_at, advance, pause, state=ctx.RawArray("i", 4), cond=ctx.Condition())

    @property
    def turn(self) -> int:
        return self.state[self.TURN]

    def hook(self, slot: int, switch: KillSwitch) -> PairHook:
        return PairHook(self, slot, switch)

    def after_hit(self, slot: int) -> None:
        with self.cond:
            index = self.state[self.COUNT]
            self.state[self.COUNT] = index + 1
            other = 1 - slot
            if index in self.switch_at and not self.state[self.DONE + other]:
                if self.advance is not None:
                    self.advance(self.pause)
                self.state[self.TURN] = other
                self.cond.notify_all()
                self._wait(slot)

    def wait_turn(self, slot: int) -> None:
        with self.cond:
            self._wait(slot)

    def _wait(self, slot: int) -> None:
        """Until it is `slot`'s turn; or, once the other worker has gone `PATIENCE` seconds
        without a boundary hit (it waits on this one: a lock, a lease, a result), take it."""
        while not self.cond.wait_for(lambda: self.turn == slot, timeout=PATIENCE):
            if self.state[self.COUNT] == self._seen:
                self.state[self.TURN] = slot
                self.cond.notify_all()
                return
            self._seen = self.state[self.COUNT]

    def finish(self, slot: int) -> None:
        """`slot` has ended (or, in the real tier, died): the other runs to its end."""
        with self.cond:
            self.state[self.DONE + slot] = 1
            self.state[self.TURN] = 1 - slot
            self.cond.notify_all()
