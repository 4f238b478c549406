"""Mutants of the steps: a `Steps` with one kind of step, or one check they share, broken."""

from __future__ import annotations

from pydantic import JsonValue

from killpoint.contract.records import EffectRecord, EffectStatus
from killpoint.contract.workflow import Step, Transition
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.fold import Change
from killpoint.reference.ledger import Session
from killpoint.reference.steps import Steps
from killpoint.scenarios.mutants.ledger import written_after

S = EffectStatus


class ApprovalsNotRevalidated(Steps):
    """000: approvals not re-validated on resume."""

    def require_grant(self, workflow_id: str, gate: str) -> None:
        """A grant seen once is trusted forever: its expiry is checked neither on resume nor
        right before the protected call."""


class CompletionWithoutVerification(Steps):
    """000: completion declared without a verification read."""

    def read_postcondition(
        self, session: Session, step: Step, record: EffectRecord
    ) -> EffectRecord:
        """The effect is marked verified without reading the service."""
        return self.store.mark_effect(
            session.lease,
            self.clock.now(),
            record.operation_id,
            S.VERIFIED,
            expect=(S.COMMITTED,),
            reason="assumed",
        )


class GlobalCompletedFlag(Steps):
    """001: a global completed flag hides a partial batch."""

    def effect(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        """One done item marks the whole batch step done."""
        step = transition.step
        done = [
            e
            for e in self.store.effects(cp.workflow_id)
            if e.step == step.name and e.status in (S.COMMITTED, S.VERIFIED)
        ]
        if done:
            return Change(transition.target, effects=done)
        return super().effect(session, cp, transition)


class UnvalidatedOutput(Steps):
    """000: checkpointing unvalidated model output."""

    def validate(self, step: Step, value: JsonValue) -> None:
        """Model output is checkpointed as it came."""


class CompensationAsRollback(Steps):
    """001: compensation treated as rollback."""

    def compensate(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        """The ledger is rewritten as if the effect were undone; no refund is sent."""
        step = transition.step
        assert step.intents is not None and step.service is not None
        ctx = self.context(session, cp, step)
        originals = ctx.effects_of(step.target_step or "")
        records = [
            self.store.mark_effect(
                session.lease,
                self.clock.now(),
                original.operation_id,
                S.COMPENSATED,
                expect=(S.COMMITTED, S.VERIFIED),
                reason="rolled back",
            )
            for original in originals
        ]
        executor = self.executor_for(session, step.service, step.name)
        receipt = originals[0].receipt if originals else None
        for intent in step.intents(ctx):
            records.append(written_after(executor, intent, S.VERIFIED, receipt, "undo"))
        return Change(transition.target, effects=records)
