"""A mutant of the dead-letter path: the queue's word taken for the record.

Seed 001: "Assuming the queue is the database: a queue delivers work; it should not be the only
proof of workflow progress. Redelivery is normal. Use durable state and concurrency control to
decide whether the message is still actionable." Seed 000 adds that a recovery failure "should
enter an operator queue with enough evidence to act". This engine counts deliveries as the
reference does, but past the limit it does what a broker's max-receive rule does: it answers
"dead-lettered" to whoever delivered the run and moves on. Nothing is written: the store still
says running, no checkpoint records the decision, and the operator queue, which reads the
store, never shows the run. Every later delivery says dead-lettered again, and no one acts.
"""

from __future__ import annotations

from killpoint.contract.records import RunStatus
from killpoint.contract.workflow import Workflow
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.dispatcher import Engine
from killpoint.reference.ledger import Session


class DeadLetterOnlyReported(Engine):
    """Past the delivery limit, reports the run dead-lettered without recording it."""

    def dead_letter(
        self, session: Session, wf: Workflow, cp: Checkpoint, why: str, key: bytes
    ) -> Checkpoint:
        """Answers dead-lettered to whoever delivered the run; writes nothing."""
        return cp.model_copy(update={"status": RunStatus.DEAD_LETTERED, "status_reason": why})
