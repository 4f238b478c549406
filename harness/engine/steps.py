"""What each kind of step does: produce an artifact, act through the effect ledger, read
authoritative state, ask a human.

The dispatcher decides which step runs and commits what it did; these methods do the step. Each
is a seam a mutant can override (`Engine` inherits them), so a broken engine differs from the
reference in exactly one of them.
"""

from __future__ import annotations

from pydantic import JsonValue

from killpoint.harness.contract import boundaries as b
from killpoint.harness.contract.adapters import EffectAdapter
from killpoint.harness.contract.artifacts import ArtifactStore
from killpoint.harness.contract.boundaries import BoundaryHook
from killpoint.harness.contract.clock import Clock
from killpoint.harness.contract.context import StepContext
from killpoint.harness.contract.errors import ArtifactError, DefinitionError, OutcomeUnknown
from killpoint.harness.contract.records import (
    ArtifactRef,
    EffectIntent,
    EffectRecord,
    EffectStatus,
    RunStatus,
)
from killpoint.harness.contract.workflow import Step, StepKind
from killpoint.harness.engine.fold import Change
from killpoint.harness.engine.ledger import EffectExecutor, Session, Stop
from killpoint.harness.engine.model import ApprovalGrant, Checkpoint
from killpoint.harness.engine.store import Store

S = EffectStatus


class BackToGate(Exception):
    """A protected step found no valid approval: the run goes back to the gate's state."""

    def __init__(self, gate: str, reason: str) -> None:
        super().__init__(reason)
        self.gate = gate
        self.reason = reason


class StepKinds:
    """The steps of the reference engine, by kind; `Engine` supplies what they use."""

    store: Store
    adapters: dict[str, EffectAdapter]
    artifacts: ArtifactStore
    clock: Clock
    hook: BoundaryHook
    lease_ttl: float
    policy_version: str
    executor_class: type[EffectExecutor]

    def require_grant(self, workflow_id: str, gate: str) -> None:
        now = self.clock.now()
        for grant in self.store.approvals(workflow_id):
            if grant.gate == gate and grant.status == "granted":
                if grant.expires_at is not None and grant.expires_at > now:
                    return
                raise BackToGate(gate, f"approval {gate!r} expired at {grant.expires_at}")
        raise BackToGate(gate, f"no valid approval {gate!r}")

    def _validate(self, step: Step, value: JsonValue) -> None:
        if step.validate is not None:
            problem = step.validate(value)
            if problem:
                raise Stop(
                    RunStatus.NEEDS_REVIEW, f"{step.name} output failed validation: {problem}"
                )

    def _artifact(self, session: Session, step: Step, ctx: StepContext) -> ArtifactRef:
        """Reuse the artifact an earlier attempt recorded; recompute only if it is gone."""
        recorded = self.store.artifact(ctx.workflow_id, step.name)
        if recorded is not None:
            sha, uri, media_type = recorded
            try:
                data = self.artifacts.get(sha)
                self._validate(step, data.decode("utf-8", "replace"))
                return ArtifactRef(
                    uri=uri, sha256=sha, media_type=media_type, produced_by=step.name
                )
            except ArtifactError:
                pass
        assert step.produce is not None
        data = step.produce(ctx)
        self._validate(step, data.decode("utf-8", "replace"))
        sha, uri = self.artifacts.put(data)
        self.hook(b.ARTIFACT_UPLOADED, step.name)
        self.store.record_artifact(
            session.lease, self.clock.now(), step.name, sha, uri, step.media_type, len(data)
        )
        self.hook(b.ARTIFACT_RECORDED, step.name)
        return ArtifactRef(uri=uri, sha256=sha, media_type=step.media_type, produced_by=step.name)

    def _effects(self, session: Session, step: Step, ctx: StepContext, target: str) -> Change:
        assert step.intents is not None and step.service is not None
        adapter = self.adapters[step.service]
        gate = step.gate
        guard = (lambda: self.require_grant(ctx.workflow_id, gate)) if gate else None
        executor = self.executor_class(session, adapter, step.name)
        intents = list(step.intents(ctx))
        names = [intent.operation for intent in intents]
        if len(set(names)) != len(names):
            raise DefinitionError(
                f"step {step.name!r} names an operation twice in {names}: each item of a "
                "batch needs its own operation name, or the ledger would merge them"
            )
        records = [executor.execute(intent, guard) for intent in intents]
        if step.kind is StepKind.COMPENSATE:
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
        return Change(target, effects=records)

    def _verify(self, session: Session, step: Step, cp: Checkpoint) -> list[EffectRecord]:
        """Read authoritative state until each effect's postcondition shows, or escalate."""
        assert step.service is not None
        adapter = self.adapters[step.service]
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
            for read in range(step.max_verify_reads):
                try:
                    seen = adapter.verify(_intent(record), record.receipt)
                except OutcomeUnknown:
                    seen = False
                self.hook(b.VERIFY_READ, step.name)
                if seen:
                    verified.append(
                        self.store.mark_effect(
                            session.lease,
                            self.clock.now(),
                            record.operation_id,
                            S.VERIFIED,
                            expect=(S.COMMITTED,),
                            reason=f"postcondition seen by {step.name}",
                        )
                    )
                    break
                self.clock.sleep(2.0**read)
                session.renew(self.lease_ttl)
            else:
                raise Stop(
                    RunStatus.NEEDS_REVIEW,
                    f"{record.operation_id}: postcondition not "
                    f"visible after {step.max_verify_reads} reads",
                )
        return verified

    def _approval(self, session: Session, step: Step, cp: Checkpoint, target: str) -> Change:
        assert step.gate is not None
        now = self.clock.now()
        grant = next((a for a in self.store.approvals(cp.workflow_id) if a.gate == step.gate), None)
        if grant is not None and grant.status == "granted" and (grant.expires_at or 0) > now:
            assert grant.actor is not None and grant.expires_at is not None
            kept = tuple(a for a in cp.approvals if a.gate != step.gate)
            return Change(
                target,
                approvals=(
                    *kept,
                    ApprovalGrant(
                        gate=step.gate,
                        actor=grant.actor,
                        scope=grant.scope,
                        policy_version=grant.policy_version,
                        expires_at=grant.expires_at,
                    ),
                ),
            )
        if grant is None or grant.status != "requested":
            self.store.request_approval(
                session.lease,
                now,
                step.gate,
                scope=f"{cp.workflow_name}:{step.gate}",
                policy_version=self.policy_version,
                payload={"workflow_id": cp.workflow_id, "input_hash": cp.input_hash},
            )
            self.hook(b.APPROVAL_REQUESTED, step.name)
        raise Stop(RunStatus.WAITING_APPROVAL, f"awaiting approval at gate {step.gate!r}")


def _intent(record: EffectRecord) -> EffectIntent:
    return EffectIntent(operation=record.intent, service=record.service, args=record.args)
