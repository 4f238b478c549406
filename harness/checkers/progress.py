"""Progress: once faults stop, recovery reaches a terminal state within a bounded number of
workers; a run without faults ends the way its scenario says.

The end is the one the engine's durable records show (`History.final_status`), never a
worker's word: a worker that says its run was dead-lettered while the store still says
running has not ended it. Without a history reader, a run whose workers never said it ended is
false all the same (their word convicts), and one they say ended is unknown: no durable
record shows it.

The bound (docs/progress.md): after the last fault that happened, at most `RECOVERY_WORKERS`
fresh workers, counted up to the first one that stopped with an end the durable records show
(the final status, or a terminal status a checkpoint holds: a needs_review stop an operator
then retried ended recovery all the same). Workers after it recovered nothing (one a start
message redelivered after the end wakes, say). One worker resumes; a lease the dead worker
left may lapse only after it, costing one more; a wait the scenario has (an approval, a read
not yet visible) one more. Only faults the history shows happened count, each in the worker
it hit: a death, a tampering the engine staged (met by the next worker), a clock jump whose
boundary was hit, a lie delivered, a deploy campaign's first delivery, a racing pair (at its
second worker), a network fault the journal names (a request ended by the fault's own
outcome). A scheduled crash never reached is no fault. A network fault that leaves the journal
as it would be without it (a lost request or response, a slow link, a duplicate, withheld
visibility, an overwrite) cannot be placed: a recovery longer than the bound is then unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

from killpoint.contract.records import is_terminal
from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import ok, unknown, violated
from killpoint.harness.history import History, WorkerRecord
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "progress"
RECOVERY_WORKERS = 3  # after the last fault: one to resume, one for a lapsed lease, one wait
# network faults that end the request they hit with their own name in the journal
JOURNALED = frozenset(
    {
        "timeout_before_commit",
        "error_before_commit",
        "error_after_commit",
        "corrupt_artifact",
        "missing_artifact",
    }
)


@dataclass(frozen=True)
class Fault:
    """A fault that happened: the last worker it touched, what it was, where the history has it."""

    worker: int
    what: str
    ref: EvidenceRef


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
    slow = _slow_recovery(history)
    if slow is not None:
        return slow
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


def _slow_recovery(history: History) -> Verdict | None:
    """False (or unknown, when a fault cannot be placed) if the workers between the last fault
    and the end outnumber the bound; None when they do not."""
    faults, unplaced = _faults(history)
    last = max(faults, key=lambda f: f.worker, default=None)
    after = sorted(
        (w for w in history.workers if last is None or w.worker > last.worker),
        key=lambda w: w.worker,
    )
    ends = {history.final_status} | {c.status for c in history.checkpoints if is_terminal(c.status)}
    ender = next((w for w in after if w.end == "stopped" and w.status in ends), None)
    needed = after if ender is None else after[: after.index(ender) + 1]
    if len(needed) <= RECOVERY_WORKERS:
        return None
    since = "the start (no fault happened)" if last is None else f"the last fault ({last.what})"
    end = (
        f"worker {ender.worker} ended it {ender.status}"
        if ender is not None
        else f"none of them says it ended {history.final_status}"
    )
    told = f"{len(needed)} workers after {since}: workers {needed[0].worker}..{needed[-1].worker}"
    if unplaced:
        return unknown(
            NAME,
            f"{told}, {end}; but the network fault(s) {', '.join(unplaced)} leave no trace "
            "of the worker they hit",
        )
    evidence = [f"after {since}"]
    evidence += [f"worker {w.worker}: {w.end} {w.status or ''} {w.reason}" for w in needed[:4]]
    evidence.append(end)
    refs = [] if last is None else [last.ref]
    refs += [EvidenceRef(kind="worker", index=w.worker) for w in needed[:4]]
    return violated(
        NAME, f"recovery needed {told}, {end}; the bound is {RECOVERY_WORKERS}", evidence, refs
    )


def _faults(history: History) -> tuple[list[Fault], list[str]]:
    """Every fault the history shows happened, each at the last worker it touched; and the
    network faults it cannot place in a worker."""
    faults = [
        Fault(w.worker, f"worker {w.worker}: {w.reason or w.end}", _worker(w.worker))
        for w in history.deaths
    ]
    for index, tamper in enumerate(history.tampered):
        if tamper.applied:  # one the engine could not stage altered nothing; this meets the next
            what = f"after worker {tamper.after_worker}: {tamper.kind} tampered"
            faults.append(Fault(tamper.after_worker, what, EvidenceRef(kind="tamper", index=index)))
    faults += [  # a lying start message, as delivered to its worker
        Fault(
            lie.worker,
            f"worker {lie.worker}: lying start message ({lie.kind})",
            _worker(lie.worker),
        )
        for lie in history.lies
        if lie.delivered
    ]
    network, unplaced = _network_faults(history)
    return [*faults, *_scheduled_faults(history), *network], unplaced


def _scheduled_faults(history: History) -> list[Fault]:
    """The schedule's clock jumps, deploy campaigns and racing pair, where they happened."""
    ran = {w.worker for w in history.workers}
    hits = {(h.worker, h.step, h.boundary, h.occurrence): i for i, h in enumerate(history.hits)}
    faults = []
    for jump in history.schedule.clock_jumps:  # a jump happens only where its boundary was hit
        at = jump.at
        hit = hits.get((at.worker, at.step, at.boundary, at.occurrence))
        if hit is not None:
            what = f"worker {at.worker}: clock jump {jump.seconds:g}s at {at.label()}"
            faults.append(Fault(at.worker, what, EvidenceRef(kind="hit", index=hit)))
    for deploy in history.schedule.deploys:  # a deploy campaign's stray first delivery
        if deploy.strategy is not None and deploy.from_worker in ran:
            what = f"worker {deploy.from_worker}: first delivery of a {deploy.strategy} deploy"
            faults.append(Fault(deploy.from_worker, what, _worker(deploy.from_worker)))
    pair = history.schedule.interleave
    if pair is not None and pair.after_worker + 2 in ran:  # both racing workers are the fault
        second = pair.after_worker + 2
        faults.append(Fault(second, f"workers {second - 1} and {second} racing", _worker(second)))
    return faults


def _network_faults(history: History) -> tuple[list[Fault], list[str]]:
    """The network faults the journal names, each in the worker whose turn its request fell
    in; and those it cannot place: a rule whose fault leaves the journal as it would be without
    it, or a named one in no worker's turn."""
    rules = history.schedule.network.rules
    unplaced = [
        f"{r.service}.{r.operation or '*'}:{r.mode}" for r in rules if r.mode not in JOURNALED
    ]
    faults = []
    for request in history.requests:
        if request.outcome in JOURNALED:
            worker = _sender(history.workers, request.seq)
            where = f"{request.service}.{request.operation} {request.outcome}"
            if worker is None:
                unplaced.append(f"journal #{request.seq} {where}")
            else:
                what = f"worker {worker}: {where}"
                faults.append(Fault(worker, what, EvidenceRef(kind="request", index=request.seq)))
    return faults, sorted(set(unplaced))


def _sender(workers: list[WorkerRecord], seq: int) -> int | None:
    """The worker whose turn a journaled request fell in: the first to end after it."""
    ends = [(w.journal_seq_end, w.worker) for w in workers if w.journal_seq_end >= seq]
    return min(ends)[1] if ends else None


def _worker(number: int) -> EvidenceRef:
    return EvidenceRef(kind="worker", index=number)
