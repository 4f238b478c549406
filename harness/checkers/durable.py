"""Durable outcome: what a run's last worker said of its end is what the engine durably kept.

Seed 001: "Assuming the queue is the database … A queue delivers work; it should not be the
only proof of workflow progress. Redelivery is normal. Use durable state and concurrency
control to decide whether the message is still actionable." A worker's returned outcome is
what the queue, and the person behind it, act on: a worker that says its run was
dead-lettered while the store still says running leaves a run no worker will take again and no
operator will see. The oracle judges every run from the durable records (`harness.durable`),
and this checker holds the worker's word to them: the status the last worker to end returned
(`History.claimed_status`) must be the run's durable status.

True when they agree, or when the last worker returned nothing (killed, failed: it said
nothing to compare); false when they differ; unknown without a history reader, where nothing
durable shows the end to compare with.
"""

from __future__ import annotations

from killpoint.harness.checkers._common import ok, unknown, violated
from killpoint.harness.contract.workflow import Workflow
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "durable_outcome"


def check_durable_outcome(history: History, workflow: Workflow) -> Verdict:
    durable, said = history.durable_status, history.claimed_status
    if durable is None:
        return unknown(NAME, "the engine shows no durable record of the run's end to compare")
    if said is None:
        return ok(NAME, f"{durable}; its last worker returned nothing to compare")
    if said == durable:
        return ok(NAME, f"{durable}, as its last worker said")
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
