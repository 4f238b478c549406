"""Attempts accounted: the services saw no more attempts of a logical operation than the budget
allows, and no attempt its engine's ledger did not spend.

A ledger spends an attempt before it sends, so a worker that dies between the two, a lease that
lapses there, or a request the network loses leaves an attempt spent that no service saw: under
faults the services may see fewer attempts of an operation than its ledger row spent, never
more — more is a send the ledger does not know of, a retry past it. On a run nothing disturbed,
every spent attempt was sent, so the two are equal. A row's deliveries are those `related` to
it (its key, else a business key among its arguments, else its arguments as the body).

It needs the ledger: without a history reader only the budget half judges (one operation seen
more often than the budget allows is false, as the journal alone proves), and the rest is
unknown. The copies a duplicating network delivered are the network's, not the engine's, and
are not counted; where another rule shares their operation a copy could be a retry in place,
so a count over the ledger's is then unknown.
"""

from __future__ import annotations

from collections import defaultdict

from killpoint.contract.records import EffectRecord
from killpoint.contract.workflow import Workflow
from killpoint.fake_services.faults import FaultMode
from killpoint.fake_services.journal import RequestRecord
from killpoint.harness.checkers._common import (
    cite_record,
    cite_request,
    mutations,
    ok,
    related,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.history import History
from killpoint.harness.results import Verdict

NAME = "attempts_accounted"


def check_attempts(history: History, workflow: Workflow) -> Verdict:
    copies = _network_copies(history)
    duplicated = copies is None
    sends = [r for r in mutations(history) if copies is None or r.seq not in copies]
    over = None if duplicated else _over_budget(history, sends)
    if over is not None:
        return over
    if not history.readable:
        return unknown(NAME, "the engine exposes no history reader: its ledger is not visible")
    if not history.ledger:
        return unknown(NAME, "the engine keeps no effect ledger: its attempts are its own")
    spent = sum(e.attempts for e in history.effects)
    if spent > history.limits.attempts:
        return violated(
            NAME,
            f"the ledger spent {spent} attempts; the budget allowed {history.limits.attempts}",
            [cite_record(e) for e in history.effects if e.attempts][:3],
        )
    quiet = _undisturbed(history)
    doubts: list[str] = []
    for record in history.effects:
        seen = related(record, sends)
        if len(seen) > record.attempts and duplicated:
            doubts.append(f"{record.operation_id}: {len(seen)} deliveries, some the network's")
        elif len(seen) > record.attempts:
            return _past_the_ledger(record, seen)
        elif quiet and len(seen) < record.attempts:
            unsent = _unsent(record, seen, sends)
            if unsent is not None:
                return unsent
            doubts.append(
                f"no delivery of {record.service} can be related to {record.operation_id}"
            )
    if doubts:
        return unknown(NAME, doubts[0])
    return ok(NAME, f"{len(history.effects)} ledger row(s); no attempt the ledger did not spend")


def _network_copies(history: History) -> set[int] | None:
    """The deliveries the network duplicated (the copies, not the originals): a copy follows its
    original at once in the journal, the same request to the letter. None when a duplicating
    rule shares its operation with another rule, so a retry in place could look the same."""
    rules = history.schedule.network.rules
    duplicating = [r for r in rules if r.mode is FaultMode.DUPLICATE_DELIVERY]
    if not duplicating:
        return set()
    for dup in duplicating:
        for other in rules:
            overlap = dup.operation is None or other.operation in (None, dup.operation)
            if other is not dup and other.service == dup.service and overlap:
                return None
    copies: set[int] = set()
    original: RequestRecord | None = None
    previous = 0
    for r in history.requests:
        copied = original is not None and r.seq == previous + 1 and _same(original, r)
        if copied and any(rule.matches(r.service, r.operation) for rule in duplicating):
            copies.add(r.seq)
        else:
            original = r
        previous = r.seq
    return copies


def _same(a: RequestRecord, b: RequestRecord) -> bool:
    """The same request again, whatever the service answered it."""
    return (a.service, a.operation, a.idempotency_key, a.business_key, a.fingerprint, a.time) == (
        b.service,
        b.operation,
        b.idempotency_key,
        b.business_key,
        b.fingerprint,
        b.time,
    )


def _over_budget(history: History, sends: list[RequestRecord]) -> Verdict | None:
    """One logical operation (one key, else one business key) seen more often than the budget
    allows: the journal alone proves it."""
    groups: dict[tuple[str, ...], list[RequestRecord]] = defaultdict(list)
    for r in sends:
        op = (r.service, r.idempotency_key) if r.idempotency_key else (r.service, r.operation)
        groups[(*op, r.business_key or "")].append(r)
    allowed = history.limits.attempts
    for requests in groups.values():
        if len(requests) > allowed:
            return violated(
                NAME,
                f"the services saw {len(requests)} attempts of one operation; the budget "
                f"allowed {allowed}",
                [f"budget: {allowed} attempts", cite_request(requests[allowed])],
                request_refs([requests[allowed]]),
            )
    return None


def _undisturbed(history: History) -> bool:
    """Nothing could have come between spending an attempt and sending it."""
    s = history.schedule
    return not (s.faulty or s.clock_jumps) and all(w.end == "stopped" for w in history.workers)


def _past_the_ledger(record: EffectRecord, seen: list[RequestRecord]) -> Verdict:
    extra = seen[record.attempts]
    return violated(
        NAME,
        f"the services saw {len(seen)} attempts of {record.operation_id}; its ledger spent "
        f"{record.attempts}: a send the ledger does not know of",
        [cite_record(record), *(cite_request(r) for r in seen[:3])],
        request_refs([extra]),
    )


def _unsent(
    record: EffectRecord, seen: list[RequestRecord], sends: list[RequestRecord]
) -> Verdict | None:
    """An undisturbed run whose ledger spent attempts the services never saw; None when no
    delivery can be related to the row while its service saw some (unknown, not false)."""
    if not seen and any(r.service == record.service for r in sends):
        return None
    return violated(
        NAME,
        f"the ledger spent {record.attempts} attempts on {record.operation_id}; the services "
        f"saw {len(seen)}, on a run nothing disturbed",
        [cite_record(record), *(cite_request(r) for r in seen[:2])],
        request_refs(seen[:2]),
    )
