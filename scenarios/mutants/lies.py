"""Mutants that take a redelivered start message at its word, written from seed 000's text.

"Validated input snapshot — preserve the approved request, normalized parameters, policy
context, and preconditions; otherwise recovery silently uses changed input or loses the user's
approved scope." "Assuming the queue is the database — redelivery is normal: use durable state
and concurrency control to decide whether the message is still actionable." "Approval and
authorization state — preserve who approved what, under which policy and expiration."

A team that reads a redelivered message as the customer's latest word makes one of two
mistakes: it writes the message over the run's validated input (`LatestMessageAmendsTheRun`),
or it keeps the input but sends the protected call as the message now asks, under an approval
given for something else (`ProtectedCallFromTheMessage`). Neither is wrong on an honest
redelivery, which repeats the message exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import BudgetLimits
from killpoint.contract.workflow import Step, StepKind
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.dispatcher import Engine
from killpoint.reference.fold import Change
from killpoint.reference.integrity import input_hash
from killpoint.reference.ledger import Session
from killpoint.reference.steps import Steps


class LatestMessageAmendsTheRun(Engine):
    """000: a start message redelivered for a run under way replaces its validated input."""

    def start(
        self,
        workflow_name: str,
        workflow_id: str,
        input: Mapping[str, JsonValue],
        limits: BudgetLimits | None = None,
    ) -> bool:
        """A run that exists is not started again, but the message is the customer's latest
        word: a run still under way carries on with the input it brings."""
        if super().start(workflow_name, workflow_id, input, limits):
            return True
        key = self.settings.secret.resolve()
        stored = self.store.latest_checkpoint(workflow_id)
        if stored is None:
            return False
        cp = self.open(stored, key)
        if cp.status.terminal or cp.input == dict(input):
            return False  # done, or the same message again: nothing to amend
        wf = self.workflow(cp.workflow_name)
        session = self.session(self.acquire(workflow_id), self.load_outputs(cp))
        amended = cp.model_copy(
            update={"input": dict(input), "input_hash": input_hash(dict(input))}
        )
        change = Change(cp.state, cp.status, "input amended by a redelivered start message")
        self.commit(session, wf, amended, change, None, key)
        return False


class LatestMessageInHand(Engine):
    """The start message this worker took is kept at hand for its steps (see below)."""

    def start(
        self,
        workflow_name: str,
        workflow_id: str,
        input: Mapping[str, JsonValue],
        limits: BudgetLimits | None = None,
    ) -> bool:
        assert isinstance(self.steps, ProtectedCallFromTheMessage)
        self.steps.message = dict(input)
        return super().start(workflow_name, workflow_id, input, limits)


class ProtectedCallFromTheMessage(Steps):
    """000: approval and authorization state — a protected call is built from the latest
    start message, after an approval was given for the request the run was validated from:
    the grant is checked for its time, never for what it approved."""

    message: dict[str, JsonValue] | None = None

    def context(self, session: Session, cp: Checkpoint, step: Step) -> StepContext:
        """A gated effect acts on the message in hand: the customer may have amended it."""
        ctx = super().context(session, cp, step)
        if step.kind is StepKind.EFFECT and step.gate is not None and self.message:
            return replace(ctx, input=self.message)
        return ctx
