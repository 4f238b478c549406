"""Progress: once faults stop, recovery reaches a terminal state within a bounded number of
workers; a run without faults ends the way its scenario says.

The end is the one the engine's durable records show (`History.final_status`), never a
worker's word: a worker that says its run was dead-lettered while the store still says
running has not ended it. The bound on workers is the harness's own record of them, which
every history holds. Without a history reader, a run whose workers never said it ended is
false all the same (their word convicts), and one they say ended is unknown: no durable
record shows it. A tampering the engine could not stage is no fault: recovery is counted from
the last fault that happened.
"""

from __future__ import annotations

from killpoint.contract.records import is_terminal
from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import ok, unknown, violated
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "progress"
RECOVERY_WORKERS = 3  # after the last fault: one to recover, room for a lease to lapse


def check_progress(history: History, workflow: Workflow) -> Verdict:
    workers = history.workers
    hung = [w for w in workers if w.end == "hung"]
    if hung:
        return violated(
            NAME,
            f"worker {hung[0].worker} hung: the harness killed it ({hung[0].reason})",
            [f"worker {w.worker} ({w.owner}): {w.reason}" for w in hung[:3]],
            [EvidenceRef(kind="worker", index=w.worker) for w in hung[:3]],
        )
    if not is_terminal(history.final_status):
        last = workers[-1] if workers else None
        said = (
            f" ({history.claimed_status}, its last worker said)" if history.claimed_status else ""
        )
        evidence = [f"{len(workers)} worker(s) ran; final status {history.final_status}{said}"]
        if last is not None:
            evidence.append(f"worker {last.worker} ended {last.end}: {last.reason}")
        return violated(
            NAME,
            f"no terminal state after {len(workers)} workers",
            evidence,
            [EvidenceRef(kind="worker", index=w.worker) for w in workers[-1:]],
        )
    last_fault = _last_fault(history)
    after = [w for w in workers if w.worker > last_fault]
    if len(after) > RECOVERY_WORKERS:
        return violated(
            NAME,
            f"recovery needed {len(after)} workers after the last fault",
            [f"worker {w.worker}: {w.end} {w.status or ''} {w.reason}" for w in after[:4]],
            [EvidenceRef(kind="worker", index=w.worker) for w in after[:4]],
        )
    # an operator's control is a person's choice of end, not a fault to recover from
    chosen = bool(history.controls_applied)
    if (
        not history.schedule.faulty
        and not chosen
        and history.final_status != history.expected_status
    ):
        return violated(
            NAME,
            f"a run without faults ended {history.final_status}, "
            f"expected {history.expected_status}",
            [f"final: {history.final_status} in {history.final_state}: {history.final_reason}"],
        )
    if not history.readable:
        return unknown(
            NAME,
            f"its workers say it ended {history.final_status}; the engine shows no durable "
            "record of its end (no history reader)",
        )
    return ok(NAME, f"{history.final_status} after {len(workers)} worker(s)")


def _last_fault(history: History) -> int:
    """The last worker a fault touched (-1: none did)."""
    last_fault = max((w.worker for w in history.deaths), default=-1)
    for tamper in history.staged:  # a tampering the engine could not stage altered nothing
        last_fault = max(last_fault, tamper.after_worker)
    # a clock jump inside a worker and a pair of racing workers are faults too
    for jump in history.schedule.clock_jumps:
        last_fault = max(last_fault, jump.at.worker)
    for deploy in history.schedule.deploys:  # a deploy campaign's stray first delivery too
        if deploy.strategy is not None:
            last_fault = max(last_fault, deploy.from_worker)
    for lie in history.schedule.lies:  # a lying start message too: the harness sends its worker
        last_fault = max(last_fault, lie.worker)
    pair = history.schedule.interleave
    if pair is not None:
        last_fault = max(last_fault, pair.after_worker + 2)
    return last_fault
