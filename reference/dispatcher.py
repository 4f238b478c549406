"""The reference engine: a deterministic dispatcher that resumes a workflow safely.

Resume follows seed 000, step 7, in order: load the latest checkpoint; check its integrity,
tenant and schema (migrating or quarantining); acquire the lease; apply the compatibility
policy and any deploy in progress; reconcile unresolved effects; re-validate approvals; check
budgets; then run the next legal transition, and again, committing a checkpoint at every
boundary. Nothing here catches `BaseException`, and nothing is committed on the way out of a
failure: a worker that dies leaves exactly what it had committed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from uuid import uuid4

from pydantic import JsonValue

from killpoint.contract import boundaries as b
from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.artifacts import ArtifactStore
from killpoint.contract.boundaries import BoundaryHook, no_hook
from killpoint.contract.clock import Clock
from killpoint.contract.errors import ArtifactError, DefinitionError
from killpoint.contract.records import BudgetLimits, Outcome, RunStatus, Versions
from killpoint.contract.workflow import Step, Transition, Workflow
from killpoint.reference.approval import BackToGate
from killpoint.reference.budget import at_time, exhausted_at, initial_budget
from killpoint.reference.checkpoint import (
    Checkpoint,
    Lineage,
    OutputsRef,
    StoredCheckpoint,
    open_checkpoint,
    seal_checkpoint,
)
from killpoint.reference.control_facts import rolled_back
from killpoint.reference.deadletter import count_delivery, dead_letter_reason
from killpoint.reference.deploy import Refused, admit
from killpoint.reference.errors import IntegrityError, UnknownWorkflowError
from killpoint.reference.fold import Change, deadline, fold, next_actions
from killpoint.reference.integrity import input_hash, output_link, sha256_hex
from killpoint.reference.lease import Lease
from killpoint.reference.ledger import Rejected, Session, Stop, intent_of
from killpoint.reference.rows import WorkflowRecord
from killpoint.reference.settings import Settings
from killpoint.reference.steps import Steps
from killpoint.reference.store import Store


class Engine:
    """One worker of the reference engine. Discard it to simulate the death of its process.

    `steps` is the class of what runs each kind of step (`Steps`); the engine builds one
    with its store, adapters, artifacts, clock, hook and settings."""

    def __init__(
        self,
        store: Store,
        workflows: Sequence[Workflow],
        adapters: Mapping[str, EffectAdapter],
        *,
        artifacts: ArtifactStore,
        clock: Clock,
        versions: Versions,
        settings: Settings | None = None,
        hook: BoundaryHook = no_hook,
        steps: type[Steps] = Steps,
    ) -> None:
        self.store = store
        self.workflows = {w.name: w for w in workflows}
        for wf in workflows:
            missing = wf.services - set(adapters)
            if missing:
                raise DefinitionError(
                    f"workflow {wf.name!r} uses service(s) {sorted(missing)} with no adapter"
                )
        self.clock = clock
        self.versions = versions
        self.settings = settings or Settings()
        self.owner = self.settings.owner or f"worker-{uuid4().hex[:8]}"
        self.hook = hook
        self.steps = steps(store, dict(adapters), artifacts, clock, hook, self.settings)

    # -- public API -------------------------------------------------------------------------

    def start(
        self,
        workflow_name: str,
        workflow_id: str,
        input: Mapping[str, JsonValue],
        limits: BudgetLimits | None = None,
    ) -> bool:
        """Create the workflow and its checkpoint 1; False if it exists (a redelivery)."""
        wf = self.workflow(workflow_name)
        limits = limits or BudgetLimits()
        now = self.clock.now()
        deadline = now + limits.time_s
        budget = at_time(initial_budget(limits), deadline, now)
        first = Checkpoint(
            workflow_id=workflow_id,
            workflow_name=wf.name,
            tenant=self.settings.tenant,
            lineage=Lineage(run_id=f"{workflow_id}:r1"),
            sequence=1,
            state=wf.initial,
            status=RunStatus.RUNNING,
            input=dict(input),
            input_hash=input_hash(dict(input)),
            versions=self.versions,
            budget=budget,
            next_actions=next_actions(wf, wf.initial),
            outputs_ref=OutputsRef(since=0),
            created_at=now,
            secret_refs=(self.settings.secret.env,),
        )
        record = WorkflowRecord.first(first, deadline)
        return self.store.create_workflow(
            record, seal_checkpoint(first, self.settings.secret.resolve())
        )

    def run(
        self,
        workflow_name: str,
        workflow_id: str,
        input: Mapping[str, JsonValue],
        limits: BudgetLimits | None = None,
    ) -> Outcome:
        self.start(workflow_name, workflow_id, input, limits)
        return self.resume(workflow_id)

    def resume(self, workflow_id: str) -> Outcome:
        """Resume a workflow of this worker's tenant; another tenant's is refused
        (`WrongTenantError`) before anything of it is read, and left as it is."""
        self.store.workflow(workflow_id, tenant=self.settings.tenant)
        key = self.settings.secret.resolve()
        try:
            stored = self.store.latest_checkpoint(workflow_id)
        except IntegrityError as exc:  # a row that cannot even be read is quarantined too
            self.store.quarantine(workflow_id, str(exc), self.clock.now())
            wf_row = self.store.workflow(workflow_id)
            return Outcome(
                workflow_id, RunStatus.QUARANTINED, wf_row.state, wf_row.sequence, str(exc)
            )
        if stored is None:
            raise UnknownWorkflowError(f"no checkpoint for workflow {workflow_id!r}")
        try:
            cp = self.open(stored, key)
            named = self.store.workflow(workflow_id).workflow_name
            if cp.workflow_name != named:  # else another workflow's steps would run on it
                raise IntegrityError(
                    f"checkpoint names workflow {cp.workflow_name!r}, its workflow row {named!r}"
                )
            outputs = self.load_outputs(cp)
            self.check_ledger(cp)
        except IntegrityError as exc:
            # the row is ours (checked above): a foreign checkpoint in it is flagged for a person
            self.store.quarantine(workflow_id, str(exc), self.clock.now())
            return Outcome(
                workflow_id, RunStatus.QUARANTINED, stored.state, stored.sequence, str(exc)
            )
        wf = self.workflow(cp.workflow_name)
        if cp.status.terminal:
            return _outcome(cp)
        if cp.status is RunStatus.WAITING_APPROVAL and not self._answered(cp, wf):
            return _outcome(cp)
        lease = self.acquire(workflow_id)
        self.hook(b.LEASE_ACQUIRED, None)
        session = self.session(lease, outputs)
        cp = self.budget_at_resume(session, cp)
        admitted = self.admit(session, wf, cp, key)
        if isinstance(admitted, Refused):  # another version's run: left as it is
            self.store.release_lease(lease, self.clock.now())
            return Outcome(workflow_id, cp.status, cp.state, cp.sequence, admitted.reason)
        cp = self.count_delivery(session, wf, admitted, key)
        if cp.status is RunStatus.RUNNING or cp.status is RunStatus.WAITING_APPROVAL:
            cp = self._drive(session, wf, cp, key)
        if cp.status.terminal or cp.status is RunStatus.WAITING_APPROVAL:
            self.store.release_lease(lease, self.clock.now())
        return _outcome(cp)

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        """A human approves a pending request, valid for ttl_s on this engine's clock; only
        on a workflow of this worker's tenant."""
        self.store.workflow(workflow_id, tenant=self.settings.tenant)
        self.store.grant_approval(workflow_id, gate, actor, self.clock.now() + ttl_s)

    # -- the steps of a resume; each one a seam a mutant can override ------------------------

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        return open_checkpoint(stored, key, self.settings.tenant)

    def load_outputs(self, cp: Checkpoint) -> dict[str, JsonValue]:
        """The run's step outputs: a migrated checkpoint's inline ones, then the rows after
        it, each re-hashed and the whole chain checked against the sealed checkpoint (a row
        beyond the checkpoint is as foreign as an altered one)."""
        ref = cp.outputs_ref
        outputs = dict(cp.outputs)
        digest, rows = "", self.store.outputs(cp.workflow_id, ref.since)
        for row in rows:
            if row.sequence > cp.sequence:
                raise IntegrityError(
                    f"output row of {row.step!r} is beyond checkpoint #{cp.sequence}"
                )
            if sha256_hex(row.value.encode()) != row.sha256:
                raise IntegrityError(f"output of {row.step!r} does not match its hash")
            digest = output_link(digest, row.sequence, row.step, row.sha256)
        if len(rows) != ref.count or digest != ref.digest:
            raise IntegrityError(
                f"{len(rows)} output rows disagree with checkpoint #{cp.sequence}, which "
                f"pins {ref.count}"
            )
        for row in rows:  # read only once the sealed chain vouches for every row
            try:
                outputs[row.step] = json.loads(row.value)
            except (ValueError, RecursionError):
                raise IntegrityError(f"output of {row.step!r} is not JSON") from None
        return outputs

    def check_ledger(self, cp: Checkpoint) -> None:
        """Each ledger row is the fold of its append-only log, written in one transaction with
        it: a row whose status is not its log's last was rolled back (or written around the
        log), and trusting it could send an effect that already happened again."""
        why = rolled_back(self.store, cp.workflow_id)
        if why is not None:
            raise IntegrityError(why)

    def acquire(self, workflow_id: str) -> Lease:
        return self.store.acquire_lease(
            workflow_id, self.owner, self.settings.lease_ttl, self.clock.now()
        )

    def session(self, lease: Lease, outputs: dict[str, JsonValue]) -> Session:
        """A holder's session of the run under `lease`: a worker's, or an operator's control."""
        attempts_left = self.store.workflow(lease.workflow_id).attempts_left
        return Session(
            self.store, lease, self.clock, self.hook, attempts_left=attempts_left, outputs=outputs
        )

    def budget_at_resume(self, session: Session, cp: Checkpoint) -> Checkpoint:
        """The durable budget is the store's; the checkpoint's copy is what was left then."""
        return cp

    def count_delivery(
        self, session: Session, wf: Workflow, cp: Checkpoint, key: bytes
    ) -> Checkpoint:
        """A run found mid-flight once too often is dead-lettered, not driven (`deadletter`)."""
        limit = self.settings.max_deliveries
        if limit is None or cp.status is not RunStatus.RUNNING:
            return cp
        count = count_delivery(self.store, session.lease, self.clock.now())
        if count <= limit:
            return cp
        why = dead_letter_reason(count, limit, cp.state, cp.status_reason)
        return self.dead_letter(session, wf, cp, why, key)

    def dead_letter(
        self, session: Session, wf: Workflow, cp: Checkpoint, why: str, key: bytes
    ) -> Checkpoint:
        """Record the run dead-lettered, in a checkpoint the operator queue reads."""
        return self.commit(
            session, wf, cp, Change(cp.state, RunStatus.DEAD_LETTERED, why), None, key
        )

    def reconcile(self, session: Session, cp: Checkpoint) -> None:
        for record in self.store.effects(cp.workflow_id):
            if record.status.unresolved:
                executor = self.steps.executor_for(session, record.service, record.step)
                executor.reconcile(intent_of(record), record)

    # -- driving ------------------------------------------------------------------------------

    def _drive(self, session: Session, wf: Workflow, cp: Checkpoint, key: bytes) -> Checkpoint:
        try:
            self.reconcile(session, cp)
        except Stop as stop:
            return self.commit(
                session, wf, cp, Change(cp.state, stop.status, stop.reason), None, key
            )
        while cp.status is RunStatus.RUNNING or cp.status is RunStatus.WAITING_APPROVAL:
            transition = wf.transition_from(cp.state)
            if transition is None:
                raise DefinitionError(f"state {cp.state!r} of {wf.name!r} has no transition")
            budget_stop = self._budget_stop(session, cp)
            change = budget_stop or self._step(session, wf, cp, transition)
            # A budget stop runs no step, so it spends none (steps_left never goes below 0).
            step = None if budget_stop else transition.step
            cp = self.commit(session, wf, cp, change, step, key)
            if cp.status is RunStatus.WAITING_APPROVAL:
                break  # entered waiting only to try an answered gate; an unanswered one parks
        return cp

    def _budget_stop(self, session: Session, cp: Checkpoint) -> Change | None:
        exhausted = exhausted_at(cp.budget, deadline(cp), self.clock.now())
        if exhausted is None or exhausted == "attempts":
            return None
        return Change(cp.state, RunStatus.BUDGET_EXHAUSTED, f"{exhausted} budget exhausted")

    def _step(
        self, session: Session, wf: Workflow, cp: Checkpoint, transition: Transition
    ) -> Change:
        step = transition.step
        self.hook(b.STEP_BEGIN, step.name)
        try:
            return self.steps.run(session, cp, transition)
        except Stop as stop:
            return Change(cp.state, stop.status, stop.reason)
        except BackToGate as back:
            return Change(
                wf.gate_state(back.gate),
                RunStatus.RUNNING,
                back.reason,
                approvals=tuple(a for a in cp.approvals if a.gate != back.gate),
            )
        except Rejected as rejected:
            if transition.on_failure is not None:
                return Change(transition.on_failure, reason=f"{step.name} rejected: {rejected}")
            return Change(cp.state, RunStatus.FAILED, f"{step.name} rejected: {rejected}")
        except ArtifactError as exc:
            return Change(cp.state, RunStatus.NEEDS_REVIEW, str(exc))

    def _answered(self, cp: Checkpoint, wf: Workflow) -> bool:
        transition = wf.transition_from(cp.state)
        if transition is None or transition.step.gate is None:
            return False
        return any(
            a.gate == transition.step.gate and a.status == "granted"
            for a in self.store.approvals(cp.workflow_id)
        )

    # -- admission and commits -------------------------------------------------------------

    def admit(
        self, session: Session, wf: Workflow, cp: Checkpoint, key: bytes
    ) -> Checkpoint | Refused:
        """Whether this worker may run the checkpoint, by the compatibility policy and any
        deploy in progress (`engine.deploy`): the decision committed, or its refusal."""
        return admit(self, session, wf, cp, key)

    def commit(
        self,
        session: Session,
        wf: Workflow,
        cp: Checkpoint,
        change: Change,
        step: Step | None,
        key: bytes,
    ) -> Checkpoint:
        """Fold a change into the next checkpoint, seal it and commit it under the lease."""
        now = self.clock.now()
        new, rows = fold(cp, change, step, wf, now, session.attempts_left)
        self.hook(b.CHECKPOINT_BUILT, step.name if step else None)
        self.store.commit_checkpoint(
            session.lease,
            now,
            seal_checkpoint(new, key, rows),
            extend_to=now + self.settings.lease_ttl,
        )
        if change.reset:
            session.outputs = {}
        session.outputs.update(change.outputs)
        self.hook(b.CHECKPOINT_COMMITTED, step.name if step else None)
        return new

    def workflow(self, name: str) -> Workflow:
        try:
            return self.workflows[name]
        except KeyError:
            raise DefinitionError(f"this engine has no workflow named {name!r}") from None


def _outcome(cp: Checkpoint) -> Outcome:
    return Outcome(cp.workflow_id, cp.status, cp.state, cp.sequence, cp.status_reason)
