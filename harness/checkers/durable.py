"""Durable outcome: what a run's last worker said of its end is what the engine durably kept.

Seed 001: "Assuming the queue is the database … A queue delivers work; it should not be the
only proof of workflow progress. Redelivery is normal. Use durable state and concurrency
control to decide whether the message is still actionable." A worker's returned outcome is
what the queue, and the person behind it, act on: a worker that says its run was
dead-lettered while the store still says running leaves a run no worker will take again and no
operator will see. The oracle judges every run from the durable records (`harness.run.durable`),
and this checker holds the worker's word to them: the status the last worker to end returned
(`History.claimed_status`) must be the run's durable status.

The same holds for what the harness's operator was told: each control it applied (the engine
returned from it, `History.controls`) must be in the engine's durable audit trail, where its
reader reads one (`protocol.AuditReader`; seed 000 keeps "operator actions" and audit logs in
the baseline), and the checkpoint a control committed must carry the fencing token its audit
row says it held: the control took the lease, as a worker does.

True when they agree, or when the last worker returned nothing (killed, failed: it said
nothing to compare) and no control was applied; false when they differ; unknown without a
history reader, where nothing durable shows the end to compare with, and when a control was
applied to an engine whose reader reads no audit trail.
"""

from __future__ import annotations

from collections import Counter

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import ok, unknown, violated
from killpoint.harness.history import History
from killpoint.harness.operator import IN_FLIGHT
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "durable_outcome"


def check_durable_outcome(history: History, workflow: Workflow) -> Verdict:
    durable, said = history.durable_status, history.claimed_status
    if durable is None:
        return unknown(NAME, "the engine shows no durable record of the run's end to compare")
    if said is not None and said != durable:
        return _disagrees(history, said, durable)
    audited = _audited(history)
    if audited is not None:
        return audited
    if said is None:
        return ok(NAME, f"{durable}; its last worker returned nothing to compare")
    return ok(NAME, f"{durable}, as its last worker said")


def _audited(history: History) -> Verdict | None:
    """A control the operator applied that the audit trail does not hold, or one committed
    under a token other than its own; unknown when the engine's reader reads no trail."""
    applied = Counter(
        line.partition(": ")[0]
        for line in history.controls
        if not line.partition(": ")[0].endswith(" refused") and not line.endswith(IN_FLIGHT)
    )
    if not applied:
        return None
    if history.audit is None:
        return unknown(NAME, "a control was applied; the engine's reader reads no audit trail")
    trail = Counter(a.control for a in history.audit)
    missing = sorted(applied - trail)
    if missing:
        return violated(
            NAME,
            f"the operator's {missing[0]} acted, and the engine's audit trail does not hold it",
            [
                f"the operator applied: {', '.join(history.controls)}",
                f"audit trail: {', '.join(a.control for a in history.audit) or 'empty'}",
            ],
        )
    tokens = {c.sequence: c.fencing_token for c in history.checkpoints if c.trusted}
    for row in history.audit:
        token = tokens.get(row.to_sequence)
        if None not in (token, row.fencing_token) and token != row.fencing_token:
            return violated(
                NAME,
                f"{row.control} says it held token {row.fencing_token}; checkpoint "
                f"#{row.to_sequence} it committed was written under token {token}",
                [f"audit: {row.control} by {row.actor}, #{row.from_sequence} → "
                 f"#{row.to_sequence} under token {row.fencing_token}"],
                [EvidenceRef(kind="checkpoint", index=row.to_sequence)],
            )  # fmt: skip
    return None


def _disagrees(history: History, said: str, durable: str) -> Verdict:
    last = next((w for w in reversed(history.workers) if w.status == said), None)
    where = "its operator queue" if history.queued is not None else "its latest trusted checkpoint"
    return violated(
        NAME,
        f"its last worker said the run ended {said}; the engine's durable records say {durable}",
        [
            f"worker {last.worker if last else '?'} returned {said} in {history.claimed_state}: "
            f"{history.claimed_reason}",
            f"{where}: {durable} in {history.final_state}: {history.final_reason}",
        ],
        [EvidenceRef(kind="worker", index=last.worker)] if last else [],
    )
