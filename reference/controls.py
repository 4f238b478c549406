"""Narrow manual controls: what an operator may do to a run that waits for a person.

Seed 000: reconcile, retry with the same key, compensate, request approval, branch, or
terminate; never force-complete. A control is a worker like any other: it reads the run for its
tenant only, takes the lease through the store's fence (a live worker's lease refuses it with
`LeaseHeldError`; a worker whose lease it took loses its next write with `StaleFenceError`),
checks its rule (`control_rules`) before and again under the lease, acts through the ledger's
own protocol, and commits one checkpoint whose transaction also writes its audit row
(`audit`). It then lets the lease go: the run's next delivery carries on from what it left.
It reports the boundaries a worker does (the lease taken, each effect's, the checkpoint built
and committed) to the worker's hook: a process can die inside a control as anywhere else.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from killpoint.contract import boundaries as b
from killpoint.contract.adapters import Capabilities
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import EffectRecord, EffectStatus, Outcome, RunStatus
from killpoint.contract.workflow import StepKind, Workflow
from killpoint.reference.approval import BackToGate
from killpoint.reference.audit import AuditedLog, AuditRecord
from killpoint.reference.checkpoint import Checkpoint, Lineage, seal_checkpoint
from killpoint.reference.control_facts import facts_of
from killpoint.reference.control_rules import CONTROLS, DONE, Facts, refusal
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import LeaseHeldError
from killpoint.reference.fold import Change, fold
from killpoint.reference.lease import Lease
from killpoint.reference.ledger import Rejected, Session, Stop, intent_of

S = EffectStatus


class ControlRefused(KillpointError):
    """A control its rule forbids now (a closed run, an irreversible effect in doubt …);
    nothing was written."""


@dataclass
class Held:
    """What a control holds while it acts: the run, its session under the control's lease."""

    workflow: Workflow
    checkpoint: Checkpoint
    session: Session
    facts: Facts


Act = Callable[[Held], Change]


class Controls:
    """The controls of one operator (`actor`), acting through one worker of the engine."""

    def __init__(self, engine: Engine, actor: str) -> None:
        if not actor.strip():
            raise KillpointError("a control needs an actor: who is acting")
        self.engine = engine
        self.actor = actor
        self.owner = f"operator:{actor}"

    # -- what may act now -------------------------------------------------------------------

    def facts(
        self, workflow_id: str, *, mine: str | None = None
    ) -> tuple[Facts, Checkpoint | None]:
        e = self.engine
        record = e.store.workflow(workflow_id, tenant=e.settings.tenant)
        return facts_of(
            e.store,
            record,
            key=e.settings.secret.resolve(),
            now=e.clock.now(),
            services=self.capabilities(),
            workflows=e.workflows,
            mine=mine,
        )

    def capabilities(self) -> dict[str, Capabilities]:
        return dict(self.engine.steps.adapters)

    def refusal(self, control: str, workflow_id: str) -> str | None:
        return refusal(control, self.facts(workflow_id)[0])

    # -- the controls ------------------------------------------------------------------------

    def act(self, control: str, workflow_id: str, reason: str, **options: str) -> Outcome:
        """The control named `control` (one of `CONTROLS`), by name: how the CLI calls them."""
        name = control.replace("-", "_")
        if control not in CONTROLS:
            raise ControlRefused(f"{control}: {refusal(control, self.facts(workflow_id)[0])}")
        method: Callable[..., Outcome] = getattr(self, name)
        return method(workflow_id, reason, **options)

    def reconcile(self, workflow_id: str, reason: str) -> Outcome:
        """Ask the service now, by key, about every effect in doubt; hand the run back to the
        workers once none is left in doubt."""
        return self._control("reconcile", workflow_id, reason, self.reconciled)

    def retry(self, workflow_id: str, reason: str) -> Outcome:
        """Send every effect in doubt again with its same key (only where the service dedups)."""
        return self._control("retry", workflow_id, reason, self.resent)

    def compensate(self, workflow_id: str, reason: str) -> Outcome:
        """Move the run to its compensating step; the next delivery runs it through the ledger."""
        return self._control("compensate", workflow_id, reason, self._compensate)

    def request_approval(self, workflow_id: str, reason: str, gate: str | None = None) -> Outcome:
        """Revoke the gate's grant, request it again and send the run back to the gate."""
        return self._control(
            "request-approval", workflow_id, reason, lambda h: self._to_gate(h, reason, gate)
        )

    def branch(self, workflow_id: str, reason: str) -> Outcome:
        """A new lineage from the last committed checkpoint; the lineage records its parent."""
        return self._control("branch", workflow_id, reason, self._branch)

    def terminate(self, workflow_id: str, reason: str) -> Outcome:
        """End the run, failed, with the operator's reason; its ledger is left as it is."""
        return self._control(
            "terminate",
            workflow_id,
            reason,
            lambda h: Change(
                h.checkpoint.state, RunStatus.FAILED, self._said("terminated", reason)
            ),
        )

    # -- how every control runs -------------------------------------------------------------

    def _control(self, control: str, workflow_id: str, reason: str, act: Act) -> Outcome:
        if not reason.strip():
            raise KillpointError(f"{control} needs a reason (--reason): why you act")
        self.check(control, workflow_id, self.facts(workflow_id)[0])
        e = self.engine
        lease = e.store.acquire_lease(workflow_id, self.owner, e.settings.lease_ttl, e.clock.now())
        e.hook(b.LEASE_ACQUIRED, None)  # a control dies where a worker can: it is one
        try:
            facts, cp = self.facts(workflow_id, mine=self.owner)
            self.check(control, workflow_id, facts)
            assert cp is not None  # a run whose checkpoint cannot be trusted was refused
            held = Held(
                e.workflow(cp.workflow_name), cp, e.session(lease, e.load_outputs(cp)), facts
            )
            new = self._commit(control, reason, held, act(held))
        finally:
            _release(e, workflow_id, self.owner)
        return Outcome(workflow_id, new.status, new.state, new.sequence, new.status_reason)

    def check(self, control: str, workflow_id: str, facts: Facts) -> None:
        """Refuse what the rule forbids; a public seam, as `reconciled` is, for a broken
        engine's operator tools (a mutant) to override."""
        why = refusal(control, facts)
        if why is not None:
            kind = LeaseHeldError if facts.lease_owner is not None else ControlRefused
            raise kind(f"{control} refused on {workflow_id!r}: {why}")

    def _commit(self, control: str, reason: str, held: Held, change: Change) -> Checkpoint:
        """Fold the control's change into the next checkpoint and commit it with its audit."""
        e, cp, session = self.engine, held.checkpoint, held.session
        now = e.clock.now()
        new, rows = fold(cp, change, None, held.workflow, now, session.attempts_left)
        entry = AuditRecord(
            workflow_id=cp.workflow_id,
            tenant=cp.tenant,
            control=control,
            actor=self.actor,
            reason=reason,
            at=now,
            from_status=held.facts.status,
            from_state=cp.state,
            from_sequence=cp.sequence,
            to_status=new.status,
            to_sequence=new.sequence,
            fencing_token=session.lease.token,
            detail=new.status_reason,
        )
        store = e.store.using(log=AuditedLog(e.store.log, entry))
        sealed = seal_checkpoint(new, e.settings.secret.resolve(), rows)
        e.hook(b.CHECKPOINT_BUILT, None)
        store.commit_checkpoint(session.lease, now, sealed)
        e.hook(b.CHECKPOINT_COMMITTED, None)
        return new

    def _said(self, what: str, reason: str) -> str:
        return f"{what} by {self.actor}: {reason}"

    # -- what each control does under its lease ---------------------------------------------

    def reconciled(self, held: Held) -> Change:
        """Reconcile's work under its lease: ask by key; the change it commits."""
        session, steps = held.session, self.engine.steps
        try:
            for record in held.facts.in_doubt:
                if record.status is S.NEEDS_REVIEW:  # asked again: back in doubt first
                    record = self._mark(held, record.operation_id, S.UNKNOWN, "asked again")
                executor = steps.executor_for(session, record.service, record.step)
                executor.reconcile(intent_of(record), record)
        except Stop as stop:
            return Change(held.checkpoint.state, stop.status, stop.reason)
        return Change(held.checkpoint.state, reason=self._said("reconciled", "no effect in doubt"))

    def resent(self, held: Held) -> Change:
        """Retry's work under its lease: each effect in doubt sent again through the ledger,
        under the key its row holds; the change it commits (a public seam, as `reconciled`)."""
        session, steps, cp = held.session, self.engine.steps, held.checkpoint
        try:
            for record in held.facts.in_doubt:
                record = self._mark(held, record.operation_id, S.PREPARED, "retry, same key")
                executor = steps.executor_for(session, record.service, record.step)
                executor.execute(intent_of(record), self._guard(held, record.step))
        except Stop as stop:
            return Change(cp.state, stop.status, stop.reason)
        except BackToGate as back:
            kept = tuple(a for a in cp.approvals if a.gate != back.gate)
            return Change(held.workflow.gate_state(back.gate), reason=back.reason, approvals=kept)
        except Rejected as rejected:  # a definite refusal: the worker takes its on_failure
            return Change(cp.state, reason=f"retried by {self.actor}: rejected: {rejected}")
        return Change(cp.state, reason=self._said("retried with the same key", "sent"))

    def _guard(self, held: Held, step: str) -> Callable[[], None] | None:
        """A gated effect is sent again only under a grant that is valid now."""
        gate, steps = held.workflow.step(step).gate, self.engine.steps
        if gate is None:
            return None
        return lambda: steps.require_grant(held.checkpoint.workflow_id, gate)

    def _compensate(self, held: Held) -> Change:
        done = {e.step for e in held.facts.effects if e.status in DONE}
        for t in held.workflow.transitions:
            if t.step.kind is StepKind.COMPENSATE and t.step.target_step in done:
                return Change(t.source, reason=self._said("compensation", t.step.name))
        raise ControlRefused("compensate: nothing to undo")  # the rule said otherwise: a race

    def _to_gate(self, held: Held, reason: str, gate: str | None) -> Change:
        wf, cp, e = held.workflow, held.checkpoint, self.engine
        gates = [t.step.gate for t in wf.transitions if t.step.kind is StepKind.APPROVAL]
        if gate is None and len(gates) == 1:
            gate = gates[0]
        if gate is None or gate not in gates:
            names = ", ".join(map(str, gates))
            raise ControlRefused(f"request-approval: name a gate of {wf.name!r} (--gate): {names}")
        e.store.request_approval(
            held.session.lease,
            e.clock.now(),
            gate,
            scope=f"{wf.name}:{gate}",
            policy_version=e.settings.policy_version,
            payload={"workflow_id": cp.workflow_id, "requested_by": self.actor, "why": reason},
        )
        kept = tuple(a for a in cp.approvals if a.gate != gate)
        why = self._said(f"approval {gate!r} requested again", reason)
        return Change(wf.gate_state(gate), RunStatus.WAITING_APPROVAL, why, approvals=kept)

    def _branch(self, held: Held) -> Change:
        cp = held.checkpoint
        lineage = Lineage(
            run_id=f"{cp.workflow_id}:r{cp.sequence + 1}",
            parent_run_id=cp.lineage.run_id,
            decision="branch",
        )
        return Change(cp.state, reason=self._said("branched", cp.lineage.run_id), lineage=lineage)

    def _mark(self, held: Held, operation_id: str, status: EffectStatus, why: str) -> EffectRecord:
        e, lease = self.engine, held.session.lease
        return e.store.mark_effect(
            lease,
            e.clock.now(),
            operation_id,
            status,
            expect=(S.STARTED, S.UNKNOWN, S.NEEDS_REVIEW),
            reason=self._said(why, "operator control"),
        )


def _release(engine: Engine, workflow_id: str, owner: str) -> None:
    """Let go of the control's lease if it still holds it (a failed control leaves no lease)."""
    record = engine.store.workflow(workflow_id)
    if record.lease_owner == owner:
        lease = Lease(workflow_id, owner, record.fencing_token, record.lease_expires_at or 0.0)
        with contextlib.suppress(KillpointError):  # lapsed or taken meanwhile: not ours
            engine.store.release_lease(lease, engine.clock.now())
