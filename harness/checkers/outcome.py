"""Expected outcome: a run ends as its scenario expects (`Scenario.expected_status`), under
faults too, unless a fault the history shows explains a safe stop.

Faults change the outcome only these ways; anything else is false — a run that gives up
(`needs_review`, `failed`) on work that could proceed has not ended safely, it has lost work:

| ends             | explained when the history shows                                            |
| ---------------- | --------------------------------------------------------------------------- |
| quarantined      | a staged tampering the loader must refuse; a deploy (a policy may refuse it) |
| needs_review     | an effect in doubt: an expected effect of a service with no read or whose    |
|                  | reads failed (its outcome cannot be learned), attempted (delivered, or an    |
|                  | attempt spent), and                                                          |
|                  | a fault that could hide its outcome (a worker that died or lost its lease,    |
|                  | a network fault on that service, two workers at once)                        |
| needs_review     | a postcondition withheld: an applied, verifiable expected effect of a        |
|                  | service the schedule faulted, read after it and never seen                   |
| needs_review     | an artifact tampered with, or served corrupt or missing                       |
| needs_review     | a request refused because another writer changed its object first (the     |
|                  | `overwritten` fault): the newer version is not the run's to delete          |
| needs_review     | a handoff sent and never accepted in a run with faults (its terms may lapse) |
| needs_review     | a handoff accepted whose deadline passed before the run ended                |
| budget_exhausted | every attempt spent (ledger, or services), the clock past the run's deadline, |
|                  | or a checkpoint's budget with no steps or cost left                          |
| dead_lettered    | the run was redelivered: more than one worker took it (a queue's max         |
|                  | deliveries stops a run that keeps failing recovery)                          |
| compensated      | the case's operator applied `compensate` (a person's control, seed 000)      |
| failed           | the case's operator applied `terminate`                                      |

A run that did not end is progress's to judge (unknown here). An explanation that needs the
ledger or the budgets (an attempt spent and never delivered) is unknown without a reader;
so is a tampering of a kind not named here. The end judged is the durable one; without a
history reader it is only what the workers said, which can make the verdict false (an end
they reported that nothing explains) but never true.
"""

from __future__ import annotations

from collections.abc import Callable

from killpoint.contract.boundaries import HANDOFF_ACCEPTED, HANDOFF_SENT
from killpoint.contract.records import is_terminal
from killpoint.contract.workflow import Workflow
from killpoint.fake_services.faults import FaultMode
from killpoint.harness.checkers._common import READABLE, is_mutation, ok, unknown, violated
from killpoint.harness.checkers.handoff import handoff_deadline
from killpoint.harness.history import History
from killpoint.harness.results import Valid, Verdict
from killpoint.harness.tampering import TAMPER_KINDS, refused

NAME = "expected_outcome"
# (True, why): the fault explains the end; ("unknown", why): it might, the evidence is missing
Why = tuple[Valid, str] | None
ARTIFACT_FAULTS = frozenset({FaultMode.CORRUPT_ARTIFACT, FaultMode.MISSING_ARTIFACT})
# what the journal says of a request that got no answer (a read saying "not there" is one)
UNANSWERED = frozenset(
    m.value
    for m in (
        FaultMode.LOST_REQUEST,
        FaultMode.LOST_RESPONSE,
        FaultMode.TIMEOUT_BEFORE_COMMIT,
        FaultMode.ERROR_BEFORE_COMMIT,
        FaultMode.ERROR_AFTER_COMMIT,
    )
)


def check_outcome(history: History, workflow: Workflow) -> Verdict:
    verdict = _judged(history)
    if verdict.valid is True and not history.readable:
        return unknown(NAME, f"its workers say: {verdict.summary}; no durable record shows it")
    return verdict


def _judged(history: History) -> Verdict:
    final, expected = history.final_status, history.expected_status
    if final == expected:
        return ok(NAME, f"{final}, as expected")
    if not is_terminal(final):
        return unknown(NAME, f"the run did not end ({final}): progress judges it")
    whys = [why for explain in EXPLANATIONS.get(final, ()) if (why := explain(history))]
    for valid, reason in whys:
        if valid is True:
            return ok(NAME, f"{final}, not {expected}: {reason}")
    if whys:
        return unknown(NAME, whys[0][1])
    return violated(
        NAME,
        f"ended {final}, expected {expected}, and nothing in the history explains it",
        [
            f"final: {final} in {history.final_state}: {history.final_reason}",
            f"faults: {history.schedule.describe()}",
        ],
    )


def _refused_tampering(history: History) -> Why:
    for t in history.staged:
        if refused(t.kind):
            return True, f"checkpoint #{t.sequence} was tampered with ({t.kind})"
    strange = [t.kind for t in history.staged if t.kind not in TAMPER_KINDS]
    if strange:
        return "unknown", f"a tampering of kind {strange[0]} may change the outcome"
    return None


def _deploy(history: History) -> Why:
    if history.schedule.deploys:
        return True, "a deploy changed the versions; the compatibility policy may refuse them"
    return None


def _in_doubt(history: History) -> Why:
    """An expected effect whose outcome could not be learned, attempted and disturbed."""
    missing = None
    for e in history.expected:
        if e.service in READABLE and not _unanswered_read(history, e.service):
            continue
        sent = any(
            is_mutation(r) and r.service == e.service and r.business_key == e.business_key
            for r in history.requests
        )
        spent = any(x.service == e.service and x.attempts > 0 for x in history.effects)
        hidden = _hiding_fault(history, e.service)
        if (sent or spent) and hidden:
            return True, f"{e.service} [{e.business_key[:24]}] was attempted; {hidden}"
        if hidden and not (history.readable and history.ledger):
            missing = f"whether {e.service} was attempted is not visible without a reader"
    return None if missing is None else ("unknown", missing)


def _unanswered_read(history: History, service: str) -> bool:
    """A read of `service` that failed (a lookup or verification read timed out or got a
    5xx): the service could be asked, but did not answer."""
    return any(
        r.service == service and not is_mutation(r) and r.outcome in UNANSWERED
        for r in history.requests
    )


def _hiding_fault(history: History, service: str) -> str | None:
    """A fault that could have hidden an effect's outcome from the worker that sent it."""
    lost = [w for w in history.workers if w.end != "stopped"]
    if lost:
        return f"worker {lost[0].worker} ended {lost[0].end} and its outcome went with it"
    if any(rule.service == service for rule in history.schedule.network.rules):
        return f"the network faulted {service}"
    if history.schedule.interleave is not None:
        return "two workers ran at once"
    return None


def _withheld(history: History) -> Why:
    """A verifiable effect applied under a fault on its service and never seen by a read."""
    for e in history.expected:
        faulted = any(rule.service == e.service for rule in history.schedule.network.rules)
        if not (e.verifiable and faulted):
            continue
        applied = [
            a
            for a in history.applied
            if a.service == e.service and a.business_key == e.business_key
        ]
        if not applied:
            continue
        reads = [
            r
            for r in history.requests
            if r.service == e.service
            and not is_mutation(r)
            and r.seq > applied[0].seq
            and r.business_key in (e.business_key, None)
        ]
        if reads and all(r.outcome != "ok" for r in reads):
            return True, f"{len(reads)} read(s) of {e.service} [{e.business_key}] never saw it"
    return None


def _artifact(kind: str) -> bool:
    """A tampering after which the table lets a correct engine stop for review."""
    row = TAMPER_KINDS.get(kind)
    return row is not None and row.explains("needs_review")


def _artifact_damaged(history: History) -> Why:
    damaged = [t.kind for t in history.staged if _artifact(t.kind)]
    damaged += [r.mode.value for r in history.schedule.network.rules if r.mode in ARTIFACT_FAULTS]
    return (True, f"an artifact was damaged ({damaged[0]})") if damaged else None


def _overwritten(history: History) -> Why:
    changed = {
        (rule.service, rule.operation)
        for rule in history.schedule.network.rules
        if rule.mode is FaultMode.OVERWRITTEN
    }
    for r in history.requests:
        if (r.service, r.operation) in changed and r.outcome == "rejected":
            return True, f"another writer changed {r.service} [{r.business_key}] first"
    return None


def _handoff_refused(history: History) -> Why:
    s = history.schedule
    sent = [i for i, h in enumerate(history.hits) if h.boundary == HANDOFF_SENT]
    if not sent or not (s.faulty or s.clock_jumps):
        return None
    after = history.hits[sent[-1] :]
    if any(h.boundary == HANDOFF_ACCEPTED for h in after):
        return None
    return True, "the receiver refused the handoff it was sent"


def _handoff_expired(history: History) -> Why:
    accepted = {h.step for h in history.hits if h.boundary == HANDOFF_ACCEPTED and h.step}
    if not accepted:
        return None
    deadline = handoff_deadline(history, accepted)
    if deadline is None:
        return "unknown", "the accepted handoff's deadline is not visible"
    if history.workers and max(w.ended_at for w in history.workers) >= deadline:
        return True, f"the accepted handoff's terms expired at t={deadline:.1f}"
    return None


def _budget_spent(history: History) -> Why:
    limits = history.limits
    sends = [r for r in history.requests if is_mutation(r) and r.service != "artifacts"]
    if sum(e.attempts for e in history.effects) >= limits.attempts or len(sends) >= limits.attempts:
        return True, f"all {limits.attempts} attempts were spent"
    workers = history.workers
    elapsed = (
        max(w.ended_at for w in workers) - min(w.started_at for w in workers) if workers else 0
    )
    if elapsed >= limits.time_s:
        return True, f"the clock passed the run's {limits.time_s:g}s"
    for cp in history.checkpoints:
        budget = cp.budget or {}
        if budget.get("steps_left", 1) <= 0 or budget.get("cost_left", 1) <= 0:
            return True, f"checkpoint #{cp.sequence} has no steps or cost left"
    if not (history.readable and history.ledger):
        return "unknown", "the ledger and the budgets are not visible without a reader"
    return None


def _redelivered(history: History) -> Why:
    if len(history.workers) > 1:
        return True, f"delivered to {len(history.workers)} workers: dead-lettered for a person"
    return None


def _operated(control: str) -> Callable[[History], Why]:
    """A person's control that ends a run so, applied by the case's operator (not refused)."""

    def applied(history: History) -> Why:
        if control in history.controls_applied:
            return True, f"the case's operator applied {control}"
        return None

    return applied


EXPLANATIONS: dict[str, tuple[Callable[[History], Why], ...]] = {
    "quarantined": (_refused_tampering, _deploy),
    "needs_review": (
        _in_doubt,
        _withheld,
        _artifact_damaged,
        _overwritten,
        _handoff_refused,
        _handoff_expired,
        _refused_tampering,
    ),
    "budget_exhausted": (_budget_spent,),
    "dead_lettered": (_redelivered,),
    "compensated": (_operated("compensate"),),
    "failed": (_operated("terminate"),),
}
