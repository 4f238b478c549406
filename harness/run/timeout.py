"""A worker's wall-time limit: a hang is a finding, not a campaign that never ends.

The in-process tier runs a worker's calls on a thread of their own and waits `timeout` seconds.
A worker still running then is killed the way the harness can kill a thread: its kill-switch is
latched, so the next boundary it reaches, on any thread, ends it; the run goes on without it,
as a supervisor's would, and `progress` judges the hang. (The real tier SIGKILLs the process.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from killpoint.harness.history import HitRecord
from killpoint.harness.run.killswitch import KillSwitch
from killpoint.harness.schedule import HitPoint

T = TypeVar("T")
TIMED_OUT = "harness.worker_timeout"  # where a hung worker's latched death is said to be


class Hung(Exception):
    """A worker ran past its timeout: killed by the harness, as a supervisor would."""


def within(
    call: Callable[[], T],
    timeout: float,
    switch: KillSwitch,
    worker: int,
    last_hit: Callable[[], HitRecord | None],
) -> T:
    """`call()` on a thread of its own, or `Hung` after `timeout` seconds (its switch latched)."""
    box: list[T | BaseException] = []

    def body() -> None:
        try:
            box.append(call())
        except BaseException as exc:
            box.append(exc)

    thread = threading.Thread(target=body, name=f"killpoint-worker-{worker}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        last = last_hit()
        where = last.label() if last is not None else "before its first boundary"
        switch.kill(HitPoint(worker=worker, step=None, boundary=TIMED_OUT, occurrence=1))
        raise Hung(f"no end after {timeout:g} s; last hit {where}")
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    return result
