"""Operator queue: a run that stopped for a person is in the engine's durable operator queue,
with the evidence a person needs to act on it.

Seed 000: "A recovery failure should enter an operator queue with enough evidence to act", and
among what production needs, "operator queue, dead-letter path, runbook, incident evidence". A
run that waits for a person (needs review, quarantined, budget exhausted, dead-lettered:
`harness.operator.QUEUED`) — by the engine's durable records, or by its last worker's word,
which is held against it — must be in the queue its engine keeps, as its history reader reads
it (`protocol.QueueReader`): with a detail that says why, and naming every effect its ledger
holds in doubt (what a person must reconcile first).

True for a run that does not wait for a person; unknown without a history reader (nothing
durable shows where it ended) and for an engine that keeps no queue its reader reads.
"""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import ended_as, ok, unknown, violated
from killpoint.harness.history import History
from killpoint.harness.operator import QUEUED
from killpoint.harness.results import Verdict

NAME = "operator_queue"
IN_DOUBT = frozenset({"started", "unknown", "needs_review"})  # a ledger row's unproven outcome


def check_operator_queue(history: History, workflow: Workflow) -> Verdict:
    stopped = ended_as(history, *QUEUED)
    if stopped is False:
        return ok(NAME, f"{history.final_status}: it waits for no one")
    if stopped is None:
        return unknown(NAME, "the engine shows no durable record of where the run ended")
    if not history.keeps_queue:
        return unknown(NAME, "the engine keeps no operator queue its history reader reads")
    status = history.final_status
    if status not in QUEUED:
        status = f"{history.claimed_status} (its last worker said; durably {status})"
    entry = history.queued
    if entry is None:
        return violated(
            NAME,
            f"it stopped for a person ({status}), and its engine's operator queue does not "
            "hold it: no one will see it",
            [
                f"final: {history.final_status} in {history.final_state}: {history.final_reason}",
                f"its last worker said: {history.claimed_status}: {history.claimed_reason}",
                "operator queue: no entry for the run",
            ],
        )
    if not entry.detail.strip():
        return violated(
            NAME,
            f"queued as {entry.reason} with no reason: nothing for a person to act on",
            [f"queue entry: {entry.reason} in {entry.state}, detail empty"],
        )
    doubts = [e.operation_id for e in history.effects if e.status.value in IN_DOUBT]
    unnamed = [op for op in doubts if op not in entry.in_doubt]
    if history.ledger and unnamed:
        return violated(
            NAME,
            f"queued as {entry.reason} without naming {unnamed[0]}, which its ledger holds "
            "in doubt",
            [
                f"queue entry: {entry.reason}: {entry.detail}; in doubt: "
                f"{', '.join(entry.in_doubt) or 'none'}",
                f"ledger: {', '.join(doubts)} in doubt",
            ],
        )
    named = f", {len(doubts)} effect(s) in doubt named" if doubts else ""
    return ok(NAME, f"queued as {entry.reason}{named}")
