"""The parts the named cases are written with: crash points, schedules, and the checks of the
seeds' expected recoveries, each a predicate over a run's history (None: as expected)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

from killpoint.contract.records import Versions
from killpoint.fake_services.realism import ACTIVE, search_lag_s
from killpoint.harness.history import History
from killpoint.harness.scenario import Expect, NotApplicable
from killpoint.harness.schedule import (
    FaultSchedule,
    HitPoint,
)


def crash(step: str, boundary: str, worker: int = 0) -> HitPoint:
    return HitPoint(worker=worker, step=step, boundary=boundary)


def schedule(scenario: str, name: str, **fields: object) -> FaultSchedule:
    run_id = "case-" + name.replace("_", "-")  # run ids end up in slugs
    return FaultSchedule.model_validate({"scenario": scenario, "run_id": run_id, **fields})


def effects(h: History, service: str, operation: str | None = None) -> int:
    return sum(1 for a in h.applied if a.service == service and operation in (None, a.operation))


def sends(h: History, service: str, operation: str, after_seq: int = 0) -> int:
    return sum(r.service == service and r.operation == operation and r.seq > after_seq
               for r in h.requests)  # fmt: skip


def unpublished(h: History) -> str | None:
    return None if sends(h, "publisher", "publish") == 0 else "published anyway"


def all_of(*checks: Callable[[History], str | None]) -> Expect:
    def expect(h: History) -> str | None:
        for check in checks:
            problem = check(h)
            if problem:
                return problem
        return None

    return expect


def status_in(*allowed: str) -> Callable[[History], str | None]:
    return lambda h: None if h.final_status in allowed else (
        f"ended {h.final_status} ({h.final_reason}), expected {' or '.join(allowed)}")  # fmt: skip


def once(service: str, operation: str | None = None) -> Callable[[History], str | None]:
    def check(h: History) -> str | None:
        n = effects(h, service, operation)
        return None if n == 1 else f"{service} took effect {n} times, expected once"

    return check


def at_most_once(service: str, operation: str = "send") -> Callable[[History], str | None]:
    def check(h: History) -> str | None:
        n = sends(h, service, operation)
        return None if n <= 1 else f"{service} received {n} {operation} requests"

    return check


def nothing_after_tamper(h: History) -> str | None:
    if not h.tampered:
        return "the schedule tampered with nothing"
    seq = h.tampered[0].journal_seq
    acted = [r for r in h.requests if r.seq > seq]
    return f"{len(acted)} request(s) after tampering" if acted else None


def receipt_committed(step: str) -> Callable[[History], str | None]:
    def check(h: History) -> str | None:
        if not h.ledger:
            return NotApplicable("the engine keeps no effect ledger to hold the receipt")
        rows = [e for e in h.effects if e.step == step]
        if len(rows) != 1 or rows[0].status not in ("committed", "verified"):
            return f"ledger for {step}: {[r.status.value for r in rows]}, expected one receipt"
        return None

    return check


def reconciled(step: str) -> Callable[[History], str | None]:
    def check(h: History) -> str | None:
        if not h.ledger:
            return NotApplicable("the engine keeps no effect ledger to reconcile")
        rows = [e for e in h.effects if e.step == step]
        if not rows or ("reconciled" not in rows[0].reason and rows[0].status != "verified"):
            return f"{step} was not reconciled: {rows}"
        return None

    return check


def branched(h: History) -> str | None:
    if "versions" in h.lacks:
        return NotApplicable("the engine keeps no versions to branch on")
    branches = [c for c in h.checkpoints if c.decision == "branch"]
    if not branches:
        return "no checkpoint records a branch decision"
    if branches[0].parent_run_id is None:
        return "the branch names no parent run"
    return None


def grants(n: int) -> Callable[[History], str | None]:
    return lambda h: None if len(h.grants) >= n else (
        f"{len(h.grants)} approval(s) given, expected a renewed one")  # fmt: skip


def a_worker_lost(h: History) -> str | None:
    if "lease" in h.lacks:
        return NotApplicable("the engine takes no lease for a worker to lose")
    lost = [w for w in h.workers if w.end == "error"]
    return None if lost else "no worker lost the race for the lease"


def nothing_deleted(h: History) -> str | None:
    deleted = effects(h, "files", "delete")
    return f"{deleted} object(s) deleted, expected the newer version kept" if deleted else None


# the services' draws for a run seeded so: its message shows in the provider's search only
# after a lag, as half the messages do
UNINDEXED = next(s for n in count() if search_lag_s(ACTIVE, s := f"unindexed-{n}", 1) > 0)

NEW_PROMPT = Versions(
    plan="publish-flow@5", prompt="writer@13", model_contract="contract@1", tool_schema="tools@1"
)
