"""Mutants for the oracle's later invariants: each a mistake that no earlier checker objects to.

The attempts a service saw against those the ledger spent, the body it applied against the
intent recorded, the outcome a run gives up with, the fencing token a takeover writes under,
the compensations per effect, and the handoff's deadline. Each is the reference engine with one
seam overridden, written from the seeds' description of the mistake, not from the checker that
catches it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace

from pydantic import JsonValue

from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.context import StepContext
from killpoint.contract.errors import EffectRejected, OutcomeUnknown
from killpoint.contract.records import (
    EffectIntent,
    EffectRecord,
    EffectStatus,
    Receipt,
    RunStatus,
)
from killpoint.contract.workflow import Step, Transition
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.dispatcher import Engine
from killpoint.reference.fold import Change
from killpoint.reference.lease import Lease
from killpoint.reference.ledger import EffectExecutor, Session, Stop
from killpoint.reference.steps import Steps
from killpoint.scenarios.mutants.wrapped import Wrapped

S = EffectStatus
CLIENT_RETRIES = 2


class _RetryingClient(Wrapped):
    """An adapter behind an HTTP client that retries a failed request on its own."""

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        for _ in range(CLIENT_RETRIES):
            try:
                return self.adapter.send(intent, key)
            except OutcomeUnknown:
                continue
        return self.adapter.send(intent, key)


class RetriedInTheClient(EffectExecutor):
    """001: retries hidden from the ledger — the client retries a timeout or a 5xx in place.

    The ledger spends one attempt per send it makes; the HTTP client underneath sends again on
    its own, so the service sees attempts no ledger row (and no budget) counts."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        super().__init__(session, _RetryingClient(adapter), step)


def _repriced(args: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The arguments as a resumed worker derives them again: amounts priced anew (+10%)."""
    return {
        name: round(value * 1.1) if name.startswith("amount") and isinstance(value, int) else value
        for name, value in args.items()
    }


class IntentRederivedOnRetry(EffectExecutor):
    """000: an effect's arguments derived again on a retry instead of taken from its intent.

    The ledger wrote the intent ahead; a retry after an attempt was spent (a resumed worker,
    or an outcome that proved absent) prices the charge again and sends that, under the same
    key, as if the recorded intent were only a hint."""

    def attempt(
        self, intent: EffectIntent, record: EffectRecord, guard: Callable[[], None] | None
    ) -> EffectRecord:
        if record.attempts > 0:
            intent = intent.model_copy(update={"args": _repriced(dict(intent.args))})
        return super().attempt(intent, record, guard)


class GivesUpOnDoubt(EffectExecutor):
    """001: every effect in doubt stops the run for review, even where the service can be asked.

    The seed escalates an *irreversible* effect whose outcome cannot be learned; this engine
    escalates every started or unknown effect, so a recoverable charge is left to a human."""

    def reconcile(self, intent: EffectIntent, record: EffectRecord) -> EffectRecord:
        reason = f"{intent.service} {intent.operation}: outcome in doubt; stopping for review"
        self.mark(record, S.NEEDS_REVIEW, expect=(S.STARTED, S.UNKNOWN), reason=reason)
        raise Stop(RunStatus.NEEDS_REVIEW, reason)


class TakeoverKeepsToken(Engine):
    """001: a lease taken over from a lapsed holder keeps that holder's fencing token.

    The holder is presumed dead, so its lease is simply reassigned: the owner changes, the
    token does not. A paused holder that wakes holds the same token as its successor."""

    def acquire(self, workflow_id: str) -> Lease:
        held = self.store.workflow(workflow_id)
        lease = super().acquire(workflow_id)
        if held.lease_owner is None or held.lease_owner == lease.owner:
            return lease
        kept = {"fencing_token": held.fencing_token}
        with self.store.db.transaction() as tx:
            self.store.fence.move(tx, lease, self.clock.now(), kept)
        return Lease(workflow_id, lease.owner, held.fencing_token, lease.expires_at)


class CompensationRepeatedOnResume(Steps):
    """001: compensation treated as safe to repeat — a worker that resumes a compensation
    sends the undo again under a key of its own, and reads a refusal as "already undone"."""

    def compensate(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        step = transition.step
        ctx = self.context(session, cp, step)
        if step.intents is not None and step.service is not None and ctx.effects_of(step.name):
            adapter = self.adapters[step.service]
            for intent in step.intents(ctx):
                # a refusal means the earlier undo went through, so this one was not needed
                with suppress(EffectRejected):
                    adapter.send(intent, f"undo-{session.lease.owner}-{ctx.workflow_id}")
        return super().compensate(session, cp, transition)


class ClockOfTheCheckpoint(Steps):
    """000: a resumed step reads the time of the checkpoint it resumes from, not the clock.

    Replay determinism taken too far: a step sees the time its state was saved, so a deadline
    it checks after a long pause is checked against the past."""

    def context(self, session: Session, cp: Checkpoint, step: Step) -> StepContext:
        return replace(super().context(session, cp, step), now=cp.created_at)


class TermsCheckedOnlyOnAcceptance(Steps):
    """000: a handoff's terms checked when it is accepted and never again.

    The receiver rejects an expired handoff at the door, but once it has said yes it acts on
    the contract whenever it gets to it, so a worker that resumes after the deadline delivers
    work no one agreed to any more."""

    def require_terms(self, step: Step, deadline: float) -> None:
        return None
