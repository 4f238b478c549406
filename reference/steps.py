"""What each kind of step does: compute a value, produce an artifact, act through the effect
ledger, compensate, read authoritative state, ask a human.

The dispatcher decides which step runs and commits what it did; a `Steps` does the step, with
one public method per `StepKind`. An `Engine` is given the class of its steps and builds one,
so a broken engine replaces one kind's behaviour (or the ledger's `executor`) by passing a
subclass that overrides one method, and the dispatcher stays the reference's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import JsonValue

from killpoint.contract import boundaries as b
from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.artifacts import ArtifactStore
from killpoint.contract.boundaries import BoundaryHook
from killpoint.contract.clock import Clock
from killpoint.contract.context import LazyEffects, StepContext
from killpoint.contract.errors import ArtifactError, DefinitionError, OutcomeUnknown
from killpoint.contract.records import ArtifactRef, EffectRecord, EffectStatus, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition
from killpoint.reference.approval import grant_scope, pinned, require_valid_grant, valid_grant
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.fold import Change
from killpoint.reference.ledger import EffectExecutor, Session, Stop, intent_of
from killpoint.reference.settings import Settings
from killpoint.reference.store import Store

S = EffectStatus
Kind = Callable[[Session, Checkpoint, Transition], Change]


class Steps:
    """The steps of the reference engine: `run` picks the method of the step's kind."""

    executor: type[EffectExecutor] = EffectExecutor  # the ledger's protocol, per effect

    def __init__(
        self,
        store: Store,
        adapters: Mapping[str, EffectAdapter],
        artifacts: ArtifactStore,
        clock: Clock,
        hook: BoundaryHook,
        settings: Settings,
    ) -> None:
        self.store = store
        self.adapters = adapters
        self.artifacts = artifacts
        self.clock = clock
        self.hook = hook
        self.settings = settings

    def run(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        """The step of `transition`, from `cp`, once the approvals it needs are re-validated."""
        self.revalidate_approvals(cp, transition.step)
        # each kind's method is named for it; looked up per step, not kept in a dict of bound
        # methods, which would make every worker a reference cycle for the collector
        kind: Kind = getattr(self, transition.step.kind.value)
        return kind(session, cp, transition)

    # -- the kinds ----------------------------------------------------------------------------

    def pure(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        step = transition.step
        assert step.compute is not None
        value = step.compute(self.context(session, cp, step))
        self.validate(step, value)
        return Change(transition.target, outputs={} if value is None else {step.name: value})

    def expensive(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        """Reuse the artifact an earlier attempt recorded; recompute only if it is gone."""
        step = transition.step
        ctx = self.context(session, cp, step)
        recorded = self.store.artifact(ctx.workflow_id, step.name)
        if recorded is not None:
            sha, uri, media_type = recorded
            try:
                self.validate(step, self.artifacts.get(sha).decode("utf-8", "replace"))
                ref = ArtifactRef(uri=uri, sha256=sha, media_type=media_type, produced_by=step.name)
                return Change(transition.target, artifacts={step.name: ref})
            except ArtifactError:
                pass
        assert step.produce is not None
        data = step.produce(ctx)
        self.validate(step, data.decode("utf-8", "replace"))
        sha, uri = self.artifacts.put(data)
        self.hook(b.ARTIFACT_UPLOADED, step.name)
        self.store.record_artifact(
            session.lease, self.clock.now(), step.name, sha, uri, step.media_type, len(data)
        )
        self.hook(b.ARTIFACT_RECORDED, step.name)
        ref = ArtifactRef(uri=uri, sha256=sha, media_type=step.media_type, produced_by=step.name)
        return Change(transition.target, artifacts={step.name: ref})

    def effect(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        ctx = self.context(session, cp, transition.step)
        return Change(transition.target, effects=self.execute(session, transition.step, ctx))

    def compensate(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        """A new effect that undoes an earlier one; the original is then marked compensated."""
        step = transition.step
        ctx = self.context(session, cp, step)
        records = self.execute(session, step, ctx)
        for original in ctx.effects_of(step.target_step or ""):
            if original.status in (S.COMMITTED, S.VERIFIED):
                records.append(
                    self.store.mark_effect(
                        session.lease,
                        self.clock.now(),
                        original.operation_id,
                        S.COMPENSATED,
                        expect=(S.COMMITTED, S.VERIFIED),
                        reason=f"compensated by {step.name}",
                    )
                )
                self.hook(b.COMPENSATE_RECORDED, step.name)
        return Change(transition.target, effects=records)

    def verify(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        """Read authoritative state until each effect's postcondition shows, or escalate."""
        step = transition.step
        targets = [e for e in self.store.effects(cp.workflow_id) if e.step == step.target_step]
        if not targets:
            raise Stop(
                RunStatus.NEEDS_REVIEW, f"{step.name}: no effect of {step.target_step!r} to verify"
            )
        verified = []
        for record in targets:
            if record.status is S.VERIFIED:
                verified.append(record)
                continue
            if record.status is not S.COMMITTED or record.receipt is None:
                raise Stop(
                    RunStatus.NEEDS_REVIEW,
                    f"{record.operation_id} is {record.status}, not committed; nothing to verify",
                )
            verified.append(self.read_postcondition(session, step, record))
        return Change(transition.target, effects=verified)

    def approval(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        step = transition.step
        assert step.gate is not None
        now = self.clock.now()
        records = self.store.approvals(cp.workflow_id)
        grant = valid_grant(records, step.gate, now)
        if grant is not None:
            kept = tuple(a for a in cp.approvals if a.gate != step.gate)
            return Change(transition.target, approvals=(*kept, pinned(grant)))
        asked = next((a for a in records if a.gate == step.gate), None)
        if asked is None or asked.status != "requested":
            self.store.request_approval(
                session.lease,
                now,
                step.gate,
                scope=grant_scope(cp.workflow_name, step.gate),
                policy_version=self.settings.policy_version,
                payload={"workflow_id": cp.workflow_id, "input_hash": cp.input_hash},
            )
            self.hook(b.APPROVAL_REQUESTED, step.name)
        raise Stop(RunStatus.WAITING_APPROVAL, f"awaiting approval at gate {step.gate!r}")

    # -- what the kinds share -----------------------------------------------------------------

    def revalidate_approvals(self, cp: Checkpoint, step: Step) -> None:
        """A protected step runs only under a grant that is still valid now."""
        if step.kind is StepKind.EFFECT and step.gate is not None:
            self.require_grant(cp.workflow_id, step.gate)

    def require_grant(self, workflow_id: str, gate: str) -> None:
        """Back to the gate unless a grant for it is valid now (on resume and before a send)."""
        require_valid_grant(self.store.approvals(workflow_id), gate, self.clock.now())

    def guard(self, step: Step, ctx: StepContext) -> Callable[[], None] | None:
        """What must still hold before each send: the step's approval and its terms."""
        gate, deadline = step.gate, step.expires(ctx) if step.expires else None
        if gate is None and deadline is None:
            return None

        def check() -> None:
            if gate is not None:
                self.require_grant(ctx.workflow_id, gate)
            if deadline is not None:
                self.require_terms(step, deadline)

        return check

    def require_terms(self, step: Step, deadline: float) -> None:
        """Stop for review once the terms a step acts under have lapsed: work delivered on an
        expired handoff is not what was agreed, and only a person can agree to it again."""
        if self.clock.now() >= deadline:
            raise Stop(
                RunStatus.NEEDS_REVIEW, f"{step.name}: its terms expired at t={deadline:.1f}"
            )

    def validate(self, step: Step, value: JsonValue) -> None:
        """A step's output is checkpointed only once its validator accepts it."""
        if step.validate is not None:
            problem = step.validate(value)
            if problem:
                raise Stop(
                    RunStatus.NEEDS_REVIEW, f"{step.name} output failed validation: {problem}"
                )

    def execute(self, session: Session, step: Step, ctx: StepContext) -> list[EffectRecord]:
        """Each of the step's intents, run to a resolved ledger row by the executor."""
        assert step.intents is not None and step.service is not None
        guard = self.guard(step, ctx)
        executor = self.executor_for(session, step.service, step.name)
        intents = list(step.intents(ctx))
        names = [intent.operation for intent in intents]
        if len(set(names)) != len(names):
            raise DefinitionError(
                f"step {step.name!r} names an operation twice in {names}: each item of a "
                "batch needs its own operation name, or the ledger would merge them"
            )
        return [executor.execute(intent, guard) for intent in intents]

    def executor_for(self, session: Session, service: str, step: str) -> EffectExecutor:
        return self.executor(session, self.adapters[service], step)

    def read_postcondition(
        self, session: Session, step: Step, record: EffectRecord
    ) -> EffectRecord:
        """Ask the service, with backoff, until the committed effect shows; then mark it."""
        assert step.service is not None and record.receipt is not None
        adapter = self.adapters[step.service]
        for read in range(step.max_verify_reads):
            try:
                seen = adapter.verify(intent_of(record), record.receipt)
            except OutcomeUnknown:
                seen = False
            self.hook(b.VERIFY_READ, step.name)
            if seen:
                return self.store.mark_effect(
                    session.lease,
                    self.clock.now(),
                    record.operation_id,
                    S.VERIFIED,
                    expect=(S.COMMITTED,),
                    reason=f"postcondition seen by {step.name}",
                )
            self.clock.sleep(2.0**read)
            session.renew(self.settings.lease_ttl)
        raise Stop(
            RunStatus.NEEDS_REVIEW,
            f"{record.operation_id}: postcondition not visible after {step.max_verify_reads} reads",
        )

    def context(self, session: Session, cp: Checkpoint, step: Step) -> StepContext:
        """What a step's own code sees: the input, earlier outputs, artifacts and effects."""
        return StepContext(
            workflow_id=cp.workflow_id,
            step=step.name,
            input=cp.input,
            outputs=session.outputs,
            artifact_refs={a.produced_by: a for a in cp.artifacts},
            effects=LazyEffects(lambda: self.store.effects(cp.workflow_id)),
            store=self.artifacts,
            hook=self.hook,
            now=self.clock.now(),
        )
