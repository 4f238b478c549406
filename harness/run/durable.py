"""A run's end as the engine's durable records show it, and as its workers said it: kept apart.

Seed 001: "Assuming the queue is the database … A queue delivers work; it should not be the
only proof of workflow progress." What a worker returns is a message to whoever delivered the
work, not a record: a worker can say a run was dead-lettered while its store still says
running and no operator ever sees it. So the oracle judges a run's end from what the engine
keeps (`History.final_status`), and keeps the worker's word apart (`History.claimed_status`),
for the checker that compares the two (`checkers.durable`):

- the engine's durable operator queue, where its reader reads one (`protocol.QueueReader`) and
  the queue holds the run: a stop for a person that an engine records beside its checkpoints
  (the reference engine quarantines a run whose checkpoint it cannot trust in its workflow
  row, the one record it can still write);
- else the latest trusted checkpoint its history reader shows (the highest sequence; of a
  fork, the one read last);
- without a history reader nothing durable is seen: `final_status` keeps the last word a
  worker gave, for the reports, and `History.durable_status` is None, so a checker that needs
  the durable end answers unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from killpoint.harness.history import WorkerRecord
from killpoint.harness.protocol import (
    AuditedControl,
    CheckpointRecord,
    HistoryReader,
    NoHistory,
    QueuedRun,
    QueueReader,
    Recorded,
)
from killpoint.harness.run.db_loss import reconnecting

if TYPE_CHECKING:
    from killpoint.harness.run.runner import Run


@dataclass(frozen=True)
class End:
    """Where a run ended: its status, the state it stopped in, and why."""

    status: str
    state: str = ""
    reason: str = ""


ABSENT = End("absent")  # no record of the run at all


def claimed_end(workers: Sequence[WorkerRecord]) -> End | None:
    """What the last worker to end (in the order they ended) returned; None when it returned
    nothing, killed or failed: an earlier worker's word is not a word about the end."""
    if not workers or workers[-1].status is None:
        return None
    last = workers[-1]
    return End(str(last.status), last.state or "", last.reason)


def queued_of(reader: HistoryReader, workflow_id: str) -> QueuedRun | None:
    return reader.queued(workflow_id) if isinstance(reader, QueueReader) else None


def audited(reader: HistoryReader) -> list[AuditedControl] | None:
    """The engine's audit trail of controls, as its reader read it; None when it reads none."""
    if isinstance(reader, Recorded):
        return reader.audited()
    return None


def durable_end(checkpoints: Sequence[CheckpointRecord], queued: QueuedRun | None) -> End:
    """The run's end by its durable records: its queue entry, else its latest trusted
    checkpoint; a run whose every checkpoint is untrusted ended where none can be read."""
    if queued is not None:
        return End(queued.reason, queued.state, queued.detail)
    trusted = [(c.sequence, i) for i, c in enumerate(checkpoints) if c.trusted]
    if not trusted:
        if checkpoints:
            last = checkpoints[-1]
            return End("untrusted", last.state, last.reason)
        return ABSENT
    latest = checkpoints[max(trusted)[1]]
    return End(latest.status, latest.state, latest.reason)


def ending(
    reader: HistoryReader,
    readable: bool,
    workflow_id: str,
    workers: Sequence[WorkerRecord],
    said: End,
) -> dict[str, Any]:
    """A history's fields about the end: the durable one (`said`, the last word a worker gave,
    without a reader), the last worker's claim, and the queue's entry.

    `workers` in the order they ended."""
    queued = queued_of(reader, workflow_id) if readable else None
    end = durable_end(reader.checkpoints(workflow_id), queued) if readable else said
    if not end.status:
        end = ABSENT
    claim = claimed_end(workers)
    return {
        "final_status": end.status,
        "final_state": end.state,
        "final_reason": end.reason,
        "claimed_status": claim.status if claim else None,
        "claimed_state": claim.state if claim else "",
        "claimed_reason": claim.reason if claim else "",
        "keeps_queue": readable and bool(getattr(reader, "keeps_queue", False)),
        "queued": queued,
        "audit": audited(reader) if readable else None,
    }


def read_records(run: Run) -> tuple[HistoryReader, bool]:
    """The engine's records of a run's workflow, all at once, and whether it has a reader;
    none when its reader fails (kept as the engine's failure)."""
    reader, store = run.engine.history_reader, run.world.store
    run.world.check_store()
    try:  # handed the run's scenario: a team's own workflow is read back as a catalogue's
        read = reconnecting(
            store.url, lambda: Recorded(reader(store, run.scenario), run.workflow_id)
        )
    except Exception as exc:
        run.failed("history reader", exc)
        return NoHistory(), False
    return read, run.engine.reader is not None


def run_ending(run: Run, reader: HistoryReader, readable: bool) -> dict[str, Any]:
    """`ending` of a run, its workers' last word the end only without a reader."""
    said = End(run.last_status or "", run.last_state, run.last_reason)
    return ending(reader, readable, run.workflow_id, run.workers, said)
