"""Mutant engines: the reference engine with exactly one of the mistakes the seeds name.

Each mutant is a small subclass of the reference engine (or of its effect executor, or of its
store) that overrides one seam, never a copy of the engine. `MUTANTS` registers each as an
`EngineSpec` under the snake_case name of its mistake; `killpoint mutants` hunts every one of
them with the campaign plan, and the oracle must catch them all.

Seed 000, "Common Checkpointing Mistakes", and seed 001, "Common pitfalls", name them; a few
come from the seeds' fault-injection tables (fencing, compare-and-swap, integrity, schemas,
approvals, verification), which say what a correct engine must do instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from pydantic import JsonValue

from killpoint.harness.contract import boundaries as b
from killpoint.harness.contract.adapters import EffectAdapter
from killpoint.harness.contract.context import StepContext
from killpoint.harness.contract.errors import EffectRejected, OutcomeUnknown
from killpoint.harness.contract.records import (
    BudgetLimits,
    EffectIntent,
    EffectRecord,
    EffectStatus,
    Receipt,
)
from killpoint.harness.contract.workflow import Step, StepKind
from killpoint.harness.engine.budget import initial_budget
from killpoint.harness.engine.dispatcher import Engine
from killpoint.harness.engine.errors import ConflictError, QuarantinedError
from killpoint.harness.engine.fence import Fence, Tx
from killpoint.harness.engine.fold import Change
from killpoint.harness.engine.integrity import parse_sealed
from killpoint.harness.engine.ledger import (
    EffectExecutor,
    Rejected,
    Session,
    fingerprint,
    operation_id,
)
from killpoint.harness.engine.migrations import upgrade
from killpoint.harness.engine.model import Checkpoint
from killpoint.harness.engine.rows import Lease, NewCheckpoint, workflow_position
from killpoint.harness.engine.store import CheckpointLog
from killpoint.harness.engines.reference import REFERENCE, ReferenceEngine
from killpoint.harness.protocol import EngineSpec, WorkerEnv
from killpoint.harness.scenario import Scenario

S = EffectStatus


# -- the effect ledger --------------------------------------------------------------------------


def _written_after(
    ex: EffectExecutor,
    intent: EffectIntent,
    status: EffectStatus,
    receipt: Receipt | None = None,
    reason: str = "",
) -> EffectRecord:
    """Write an effect's row *after* its call: insert it, or move the row a past call left."""
    s = ex.session
    op = operation_id(ex.step, intent)
    existing = next((e for e in s.store.effects(s.workflow_id) if e.operation_id == op), None)
    if existing is not None:
        return s.store.mark_effect(
            s.lease,
            s.clock.now(),
            op,
            status,
            expect=(existing.status,),
            receipt=receipt,
            reason=reason,
        )
    record = EffectRecord(
        workflow_id=s.workflow_id,
        operation_id=op,
        step=ex.step,
        service=intent.service,
        intent=intent.operation,
        args=intent.args,
        idempotency_key=ex.key(intent),
        fingerprint=fingerprint(intent),
        status=status,
        attempts=1,
        receipt=receipt,
        reason=reason,
        updated_at=s.clock.now(),
    )
    return s.store.prepare_effect(s.lease, s.clock.now(), record)


class _ConversationExecutor(EffectExecutor):
    """No ledger: call the service, then write its answer down like a line of a transcript.

    Nothing is written ahead and nothing written before is consulted: the checkpoint's state
    is the only memory of whether the call was made."""

    def execute(
        self, intent: EffectIntent, guard: Callable[[], None] | None = None
    ) -> EffectRecord:
        if guard is not None:
            guard()
        try:
            receipt = self.adapter.send(intent, self.key(intent))
        except EffectRejected as exc:
            raise Rejected(str(exc)) from exc
        self.session.hook(b.RESPONSE_READ, self.step)
        return _written_after(self, intent, S.COMMITTED, receipt)


class _PerWorkerKeys:
    """An adapter seen through keys that name the worker making the attempt."""

    def __init__(self, adapter: EffectAdapter, owner: str) -> None:
        self.adapter, self.owner = adapter, owner
        self.service, self.idempotent = adapter.service, adapter.idempotent
        self.queryable, self.irreversible = adapter.queryable, adapter.irreversible

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        return self.adapter.send(intent, f"{key}-{self.owner}")

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        return self.adapter.lookup(intent, f"{key}-{self.owner}")

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        return self.adapter.verify(intent, receipt)


class _FreshKeyExecutor(EffectExecutor):
    """Each worker sends and looks up under a key of its own, not the operation's stored one."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        super().__init__(session, _PerWorkerKeys(adapter, session.lease.owner), step)


class _TimeoutIsFailureExecutor(EffectExecutor):
    def on_unknown(self, record: EffectRecord, why: str) -> EffectRecord:
        """A timeout is taken for a clean failure: back to `prepared`, and send it again."""
        return self._mark(record, S.PREPARED, expect=(S.STARTED,), reason=f"failed: {why}")


class _RecordAfterCallExecutor(EffectExecutor):
    """The call is made first and its row written after: no intent is committed ahead."""

    def write_ahead(self, intent: EffectIntent) -> EffectRecord:
        s = self.session
        op = operation_id(self.step, intent)
        existing = next((e for e in s.store.effects(s.workflow_id) if e.operation_id == op), None)
        if existing is not None:
            return existing
        return EffectRecord(  # in memory only
            workflow_id=s.workflow_id,
            operation_id=op,
            step=self.step,
            service=intent.service,
            intent=intent.operation,
            args=intent.args,
            idempotency_key=self.key(intent),
            fingerprint=fingerprint(intent),
            status=S.PREPARED,
            attempts=0,
            updated_at=s.clock.now(),
        )

    def attempt(
        self, intent: EffectIntent, record: EffectRecord, guard: Callable[[], None] | None
    ) -> EffectRecord:
        if guard is not None:
            guard()
        try:
            receipt = self.adapter.send(intent, record.idempotency_key)
        except OutcomeUnknown as exc:
            return _written_after(self, intent, S.UNKNOWN, reason=f"outcome unknown: {exc}")
        except EffectRejected as exc:
            _written_after(self, intent, S.FAILED, reason=str(exc))
            raise Rejected(str(exc)) from exc
        self.session.hook(b.RESPONSE_READ, self.step)
        record = _written_after(self, intent, S.COMMITTED, receipt)
        self.session.hook(b.RECEIPT_COMMITTED, self.step)
        return record


# -- the dispatcher -----------------------------------------------------------------------------


class _ConversationOnly(Engine):
    executor_class = _ConversationExecutor


class _FreshKeyOnResume(Engine):
    executor_class = _FreshKeyExecutor


class _TimeoutIsFailure(Engine):
    executor_class = _TimeoutIsFailureExecutor


class _RecordAfterCall(Engine):
    executor_class = _RecordAfterCallExecutor


class _BudgetsResetOnRestart(Engine):
    limits = BudgetLimits()

    def budget_at_resume(self, session: Session, cp: Checkpoint) -> Checkpoint:
        """The budget is set back to the limits every time a worker picks the run up."""
        budget = initial_budget(self.limits)
        session.attempts_left = budget.attempts_left
        return cp.model_copy(update={"budget": budget})


class _ApprovalsNotRevalidated(Engine):
    def revalidate_approvals(self, cp: Checkpoint, step: Step) -> None:
        """A grant seen once is trusted forever: no check of its expiry on resume."""

    def require_grant(self, workflow_id: str, gate: str) -> None:
        """Nor right before the protected call."""


class _IntegrityUnchecked(Engine):
    def open(self, stored: Any, key: bytes) -> Checkpoint:
        """Deserialize whatever the store holds: no tag, no tenant check."""
        return Checkpoint.model_validate(upgrade(parse_sealed(stored.body)))

    def load_outputs(self, cp: Checkpoint) -> dict[str, JsonValue]:
        """Nor of the output rows against the checkpoint's chain."""
        rows = self.store.outputs(cp.workflow_id, cp.outputs_ref.since)
        return {**cp.outputs, **{r.step: json.loads(r.value) for r in rows}}


class _OldSchemaDefaulted(Engine):
    def open(self, stored: Any, key: bytes) -> Checkpoint:
        """A legacy checkpoint missing a safety field is migrated with invented defaults."""
        try:
            return super().open(stored, key)
        except QuarantinedError:
            doc = parse_sealed(stored.body)
            doc["owner_tenant"] = doc.get("owner_tenant") or self.tenant
            limits = BudgetLimits()
            doc["limits"] = doc.get("limits") or {
                "attempts": limits.attempts,
                "steps": limits.steps,
                "cost": limits.cost,
                "time_ms": int(limits.time_s * 1000),
            }
            return Checkpoint.model_validate(upgrade(doc))


class _UnverifiedCompletion(Engine):
    def _verify(self, session: Session, step: Step, cp: Checkpoint) -> list[EffectRecord]:
        """Mark the step's effects verified without reading the service."""
        return [
            self.store.mark_effect(
                session.lease,
                self.clock.now(),
                e.operation_id,
                S.VERIFIED,
                expect=(S.COMMITTED,),
                reason="assumed",
            )
            for e in self.store.effects(cp.workflow_id)
            if e.step == step.target_step and e.status is S.COMMITTED
        ]


class _RedeliveryIsFreshWork(Engine):
    def start(
        self,
        workflow_name: str,
        workflow_id: str,
        input: Mapping[str, JsonValue],
        limits: BudgetLimits | None = None,
    ) -> bool:
        """A redelivered start message starts the workflow over from its first state."""
        if super().start(workflow_name, workflow_id, input, limits):
            return True
        key = self.secret.resolve()
        stored = self.store.latest_checkpoint(workflow_id)
        assert stored is not None
        cp = self.open(stored, key)
        wf = self._workflow(cp.workflow_name)
        lease = self.acquire(workflow_id)
        session = Session(self.store, lease, self.clock, self.hook, cp.budget.attempts_left)
        self.commit(session, wf, cp, Change(wf.initial, reset=True), None, key)
        return True


class _GlobalCompletedFlag(Engine):
    def _effects(self, session: Session, step: Step, ctx: StepContext, target: str) -> Change:
        """One done item marks the whole batch step done."""
        done = [e for e in ctx.effects_of(step.name) if e.status in (S.COMMITTED, S.VERIFIED)]
        if done and step.kind is StepKind.EFFECT:
            return Change(target, effects=done)
        return super()._effects(session, step, ctx, target)


class _UnvalidatedOutput(Engine):
    def _validate(self, step: Step, value: JsonValue) -> None:
        """Model output is checkpointed as it came."""


class _CompensationAsRollback(Engine):
    def _effects(self, session: Session, step: Step, ctx: StepContext, target: str) -> Change:
        """Compensation rewrites the ledger as if the effect were undone; no refund is sent."""
        if step.kind is not StepKind.COMPENSATE:
            return super()._effects(session, step, ctx, target)
        assert step.intents is not None
        executor = self.executor_class(session, self.adapters[step.service or ""], step.name)
        records = []
        for original in ctx.effects_of(step.target_step or ""):
            records.append(
                self.store.mark_effect(
                    session.lease,
                    self.clock.now(),
                    original.operation_id,
                    S.COMPENSATED,
                    expect=(S.COMMITTED, S.VERIFIED),
                    reason="rolled back",
                )
            )
        for intent in step.intents(ctx):
            records.append(
                _written_after(executor, intent, S.VERIFIED, original_receipt(ctx, step), "undo")
            )
        return Change(target, effects=records)


def original_receipt(ctx: StepContext, step: Step) -> Receipt | None:
    originals = ctx.effects_of(step.target_step or "")
    return originals[0].receipt if originals else None


# -- the store ----------------------------------------------------------------------------------


class _LastWriterWins(Fence):
    def compare_and_swap(
        self, tx: Tx, lease: Lease, now: float, cp: NewCheckpoint, *, extend_to: float | None
    ) -> None:
        """No compare-and-swap: a commit moves the workflow row whatever it holds."""
        self.move(tx, lease, now, workflow_position(cp), fenced=False)


class _WrittenOver(CheckpointLog):
    def append(self, tx: Tx, lease: Lease, now: float, cp: NewCheckpoint) -> None:
        """…and takes its sequence's place in the log, whoever wrote there first."""
        self.erase(tx, lease.workflow_id, cp.sequence)
        super().append(tx, lease, now, cp)


class _Unfenced(Fence):
    def guard(
        self,
        tx: Tx,
        lease: Lease,
        now: float,
        values: dict[str, Any] | None = None,
        *,
        expect_sequence: int | None = None,
        extend_to: float | None = None,
        spend_attempt: bool = False,
    ) -> None:
        """Writes carry no fencing token: only the compare-and-swap on the sequence is left."""
        moved = self.move(
            tx,
            lease,
            now,
            values or {},
            fenced=False,
            expect_sequence=expect_sequence,
            extend_to=extend_to,
            spend_attempt=spend_attempt,
        )
        if moved != 1:
            raise ConflictError(f"compare-and-swap lost: expected sequence {expect_sequence}")


class _LeaseWithoutFencing(Engine):
    def acquire(self, workflow_id: str) -> Lease:
        """Once taken, the lease is never checked again, by the store or before a send."""
        lease: Lease = super().acquire(workflow_id)
        return Lease(lease.workflow_id, lease.owner, lease.token, math.inf)


# -- the engines under test ---------------------------------------------------------------------


def _with(engine: type[Engine]) -> type[ReferenceEngine]:
    return type(f"Mutant{engine.__name__}", (ReferenceEngine,), {"engine_class": engine})


class _BudgetsReset(ReferenceEngine):
    """000: letting restarts reset limits."""

    engine_class = _BudgetsResetOnRestart

    def build(self, env: WorkerEnv, scenario: Scenario) -> Engine:
        engine = super().build(env, scenario)
        assert isinstance(engine, _BudgetsResetOnRestart)
        engine.limits = scenario.limits
        return engine


def _with_store(
    fence: Fence | None = None, log: CheckpointLog | None = None, engine: type[Engine] = Engine
) -> type[ReferenceEngine]:
    def __init__(self: ReferenceEngine, env: WorkerEnv, scenario: Scenario) -> None:
        ReferenceEngine.__init__(self, env, scenario)
        self.store = self.store.using(fence=fence, log=log)
        self.engine.store = self.store

    attrs = {"__init__": __init__, "engine_class": engine}
    return type(f"Mutant{type(fence or log).__name__}", (ReferenceEngine,), attrs)


def _spec(name: str, engine: type[ReferenceEngine], doc: str) -> EngineSpec:
    """The reference engine's spec (reader, tamper hook and all) with this mutant's workers."""
    engine.__doc__ = doc  # each mutant's one line: the seed's mistake it makes
    return replace(REFERENCE, name=name, factory=engine, ref=f"mutant:{name}", description=doc)


MUTANTS: dict[str, EngineSpec] = {
    s.name: s
    for s in (
        _spec(
            "only_conversation_saved",
            _with(_ConversationOnly),
            "000: saving only the conversation — no effect ledger",
        ),
        _spec(
            "fresh_idempotency_key_on_resume",
            _with(_FreshKeyOnResume),
            "000: generating a fresh idempotency key on resume",
        ),
        _spec(
            "timeout_treated_as_failure",
            _with(_TimeoutIsFailure),
            "000: marking a timeout as a failure (and retrying it)",
        ),
        _spec(
            "state_updated_after_call",
            _with(_RecordAfterCall),
            "001: updating state after a call without a write-ahead record",
        ),
        _spec(
            "no_compare_and_swap",
            _with_store(_LastWriterWins(), _WrittenOver()),
            "000: no compare-and-swap — the last writer wins",
        ),
        _spec(
            "lease_without_fencing_token",
            _with_store(_Unfenced(), engine=_LeaseWithoutFencing),
            "001: a lease without a fencing token",
        ),
        _spec("budgets_reset_on_restart", _BudgetsReset, "000: letting restarts reset limits"),
        _spec(
            "approvals_not_revalidated",
            _with(_ApprovalsNotRevalidated),
            "000: approvals not re-validated on resume",
        ),
        _spec(
            "checkpoint_trusted_unchecked",
            _with(_IntegrityUnchecked),
            "000: a checkpoint trusted without its integrity check",
        ),
        _spec(
            "old_schema_defaulted",
            _with(_OldSchemaDefaulted),
            "000: ignoring version drift — an old schema defaulted silently",
        ),
        _spec(
            "completion_without_verification",
            _with(_UnverifiedCompletion),
            "000: completion declared without a verification read",
        ),
        _spec(
            "redelivery_treated_as_fresh_work",
            _with(_RedeliveryIsFreshWork),
            "000: assuming the queue is the database — redelivery is fresh work",
        ),
        _spec(
            "global_completed_flag",
            _with(_GlobalCompletedFlag),
            "001: a global completed flag hides a partial batch",
        ),
        _spec(
            "unvalidated_output_checkpointed",
            _with(_UnvalidatedOutput),
            "000: checkpointing unvalidated model output",
        ),
        _spec(
            "compensation_as_rollback",
            _with(_CompensationAsRollback),
            "001: compensation treated as rollback",
        ),
    )
}
