"""Mutants only deeper fault schedules expose: each mistake needs two faults on one operation,
a fault on a read, or a start message that comes back after the run has ended.

The systematic plan crashes once or twice and faults one mutating request at a time; these
mistakes survive all of that and show only under what the exploration (`harness.campaign.explore`)
generates: a crash right after a 5xx, a lookup that times out, a verification read that fails,
a redelivery after completion. Each is the reference engine with one seam overridden, written
from the seeds' description of the mistake, not from the schedule that exposes it.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.errors import EffectRejected, OutcomeUnknown
from killpoint.contract.records import (
    BudgetLimits,
    EffectIntent,
    EffectRecord,
    EffectStatus,
    Receipt,
    is_terminal,
)
from killpoint.contract.workflow import Step
from killpoint.reference.errors import UnknownWorkflowError
from killpoint.reference.ledger import EffectExecutor, Session
from killpoint.reference.steps import Steps
from killpoint.scenarios.mutants.resume import RedeliveryIsFreshWork
from killpoint.scenarios.mutants.wrapped import Wrapped

S = EffectStatus


class UnrecordedAttemptResent(EffectExecutor):
    """001: retries hidden from the ledger — an attempt killed before its outcome was recorded
    is sent again as the same attempt.

    A row left `started` means the worker died between spending an attempt and recording what
    came back. Once the lookup says the service holds nothing, this engine takes the started
    attempt as never made and, where the service dedups by key (a resend is "free"), makes it
    now without spending another: after a 5xx the service has seen one more attempt than the
    ledger counts, and each crash after a 5xx adds one."""

    def reconcile(self, intent: EffectIntent, record: EffectRecord) -> EffectRecord:
        resolved = super().reconcile(intent, record)
        if not self.adapter.idempotent or record.status is not S.STARTED:
            return resolved
        if resolved.status is not S.PREPARED:
            return resolved
        again = self.mark(resolved, S.STARTED, expect=(S.PREPARED,), reason="attempt resumed")
        try:
            receipt = self.adapter.send(intent, again.idempotency_key)
        except OutcomeUnknown as exc:
            return self.on_unknown(again, str(exc))
        except EffectRejected as exc:  # `execute` takes the failure from the row
            return self.mark(again, S.FAILED, expect=(S.STARTED,), reason=str(exc))
        return self.mark(again, S.COMMITTED, expect=(S.STARTED,), receipt=receipt)


class _SilenceIsAbsence(Wrapped):
    """An adapter whose lookup reads a timeout or a 5xx as "the service holds nothing"."""

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        try:
            return self.adapter.lookup(intent, key)
        except OutcomeUnknown:
            return None


class LookupTimeoutIsAbsence(EffectExecutor):
    """000: marking a timeout as a failure — a reconcile lookup that times out is taken for
    "not found", so an effect the service already holds is sent again."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        super().__init__(session, _SilenceIsAbsence(adapter), step)


class _FailedReadIsSeen(Wrapped):
    """An adapter whose verification read counts a timeout or a 5xx as the postcondition seen."""

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        try:
            return self.adapter.verify(intent, receipt)
        except OutcomeUnknown:
            return True  # "the read did not say it is missing"


class FailedReadIsVerified(Steps):
    """000: completion declared without a verification read — a read that failed is taken for
    one that saw the effect (the receipt is there, so the effect must be)."""

    def read_postcondition(
        self, session: Session, step: Step, record: EffectRecord
    ) -> EffectRecord:
        assert step.service is not None
        own = self.adapters
        self.adapters = {**own, step.service: _FailedReadIsSeen(own[step.service])}
        try:
            return super().read_postcondition(session, step, record)
        finally:
            self.adapters = own


class FinishedRunRestarted(RedeliveryIsFreshWork):
    """000: assuming the queue is the database — a start message for a run that has finished
    is new work, so the finished workflow starts over (in flight, a redelivery is ignored)."""

    def start(
        self,
        workflow_name: str,
        workflow_id: str,
        input: Mapping[str, JsonValue],
        limits: BudgetLimits | None = None,
    ) -> bool:
        try:
            in_flight = not is_terminal(self.store.workflow(workflow_id).status)
        except UnknownWorkflowError:
            in_flight = False
        if in_flight:
            return False  # the redelivery of a run in flight is a duplicate
        return super().start(workflow_name, workflow_id, input, limits)
