"""Forked worker processes of the real tier, from the parent's side: a worker set up and
waiting for its turn, and the waits for its end, each with a time limit (a hang is killed).
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable
from pathlib import Path


class Standby:
    """A forked worker waiting on its pipe: go (with whether the start was delivered), or not."""

    def __init__(self, pid: int, paths: tuple[Path, Path, Path], go_fd: int, started: Path) -> None:
        self.pid, self.paths, self._go, self.started = pid, paths, go_fd, started

    def wait(self, timeout: float) -> int | None:
        """Its exit status; None if it ran past `timeout` seconds, after which it is killed."""
        fd = os.pidfd_open(self.pid)
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
        finally:
            os.close(fd)
        if not ready:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            return None
        return os.waitpid(self.pid, 0)[1]

    def go(self, started: bool) -> None:
        try:
            os.write(self._go, b"1" if started else b"0")
        except BrokenPipeError:
            pass  # it died setting up: its exit status and missing result will say so
        finally:
            os.close(self._go)

    def dismiss(self) -> None:
        os.close(self._go)  # end of file: the worker exits
        os.waitpid(self.pid, 0)


def wait_all(
    pair: list[Standby], timeout: float, finished: Callable[[int], None]
) -> list[int | None]:
    """The exit status of each of a pair (None: past `timeout`, then killed), handing the
    turn over as each one ends, so a worker that died holding it does not stall the other."""
    fds = {os.pidfd_open(s.pid): slot for slot, s in enumerate(pair)}
    statuses: list[int | None] = [None, None]
    deadline = time.monotonic() + timeout
    try:
        while fds and (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(list(fds), [], [], left)
            for fd in ready:
                slot = fds.pop(fd)
                os.close(fd)
                statuses[slot] = os.waitpid(pair[slot].pid, 0)[1]
                finished(slot)
    finally:
        for fd, slot in fds.items():  # past the timeout: hung
            os.close(fd)
            os.kill(pair[slot].pid, signal.SIGKILL)
            os.waitpid(pair[slot].pid, 0)
    return statuses
