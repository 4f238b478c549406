"""Deadline kept: the run's time budget is judged on the world's clock, across every restart.

Seed 000, "Budgets and stop conditions": carry the time limit into the resumed run, because a
restart that resets it "enables an unbounded loop"; time is a budget like attempts and cost.
The run's deadline is its start on the world clock plus the scenario's `limits.time_s`,
however long the run was down in between: its start is the engine's first trusted checkpoint
where its records show one (a worker that died before the engine durably took the start message
started nothing), else the first worker's start (when the message was first handed over). Two
halves with their own evidence:

- the journal half judges any engine: no mutating request reaches a service after the deadline
  (a run that acts a day late has acted, whatever it says of its budget);
- the checkpoint half reads the time budget each trusted checkpoint carries (`time_left_ms`):
  it may never be more than what the clock left at the checkpoint's time (the limit minus the
  time since the start). An engine that counts only the time it was running, or restarts its
  timer on each resume, shows more left than the clock does after the first downtime.

`TOLERANCE_S` allows for an engine that keeps time in coarser units (seconds, rounded). Either
half proving a violation is false; the checkpoint half without a visible time budget (no
reader, a trusted checkpoint without `time_left_ms`) is unknown.
"""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import (
    cite_request,
    mutations,
    ok,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "deadline_kept"
TOLERANCE_S = 1.0


def check_deadline(history: History, workflow: Workflow) -> Verdict:
    if not history.workers:
        return unknown(NAME, "no worker ran: the run never started")
    start, since = _start(history)
    limit = history.limits.time_s
    deadline = start + limit
    late = [r for r in mutations(history) if r.time > deadline + TOLERANCE_S]
    if late:
        first = late[0]
        return violated(
            NAME,
            f"{first.service}.{first.operation} was sent {first.time - deadline:g}s after the "
            f"run's deadline (t={deadline:.1f}: {since} t={start:.1f} + {limit:g}s)",
            [f"deadline: t={deadline:.1f}", *(cite_request(r) for r in late[:3])],
            request_refs(late[:3]),
        )
    visible = [c for c in history.checkpoints if c.trusted]
    for cp in sorted(visible, key=lambda c: c.sequence):
        left = (cp.budget or {}).get("time_left_ms")
        clock_left_ms = (deadline - cp.created_at) * 1000
        if left is not None and left > clock_left_ms + TOLERANCE_S * 1000:
            return violated(
                NAME,
                f"checkpoint #{cp.sequence} says {left / 1000:g}s of time left; the clock left "
                f"{clock_left_ms / 1000:g}s: time the run spent was not counted",
                [
                    f"deadline: t={deadline:.1f} ({since} t={start:.1f} + {limit:g}s)",
                    f"checkpoint #{cp.sequence} ({cp.state}) at t={cp.created_at:.1f}: "
                    f"time_left_ms={left:g}",
                ],
                [EvidenceRef(kind="checkpoint", index=cp.sequence)],
            )
    missing = _missing_time(history)
    if missing is not None:
        return unknown(NAME, missing)
    return ok(NAME, f"nothing sent after t={deadline:.1f}; no checkpoint counts more time left")


def _start(history: History) -> tuple[float, str]:
    """When the run's time budget began, and what says so: the engine's first trusted
    checkpoint where its records show one (a worker that died before the engine took the start
    message durably started nothing: the next delivery did), else the first worker's start."""
    trusted = [c for c in history.checkpoints if c.trusted] if history.readable else []
    if trusted:
        return min(trusted, key=lambda c: c.sequence).created_at, "its first checkpoint"
    return min(w.started_at for w in history.workers), "its start"


def _missing_time(history: History) -> str | None:
    """Why the checkpoint half cannot say the time budget was kept, if it cannot."""
    if not history.readable:
        return "the engine exposes no history reader: no time budget is visible"
    trusted = [c for c in history.checkpoints if c.trusted]
    if not trusted:
        return "no trusted checkpoint carries a time budget"
    bare = [c.sequence for c in trusted if "time_left_ms" not in (c.budget or {})]
    if bare:
        return f"trusted checkpoint #{bare[0]} carries no time budget"
    return None
