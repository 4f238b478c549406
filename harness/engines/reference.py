"""The reference engine behind the harness's protocol: its worker, history reader and tamper hook.

This is the one place where the harness meets killpoint's own engine, exactly as an adapter for
LangGraph or DBOS meets theirs: the harness hands over a `StoreHandle` and a `WorkerEnv`, and
this module opens the engine's `Store` on that URL (once per world, kept in `handle.shared`),
builds a worker per `WorkerEnv`, reads the store back as neutral records for the oracle, and
stages the seeds' tamperings on it. Mutants subclass `ReferenceEngine` and swap one of its
parts, so every mutant is the reference engine with one mistake.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.records import ApprovalRecord, EffectRecord, Outcome
from killpoint.harness.engines.spec import framework_spec
from killpoint.harness.protocol import (
    AuditedControl,
    CheckpointRecord,
    QueuedRun,
    StoreHandle,
    WorkerEnv,
)
from killpoint.harness.run.folders import empty
from killpoint.harness.scenario import Scenario
from killpoint.reference.audit import STATEMENTS as AUDIT_STATEMENTS
from killpoint.reference.audit import audit_trail
from killpoint.reference.checkpoint import StepOutput, open_checkpoint, parse_sealed, upgrade
from killpoint.reference.controls import Controls
from killpoint.reference.deadletter import STATEMENTS as DELIVERY_STATEMENTS
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import IntegrityError, UnknownWorkflowError, WrongTenantError
from killpoint.reference.integrity import DEFAULT_KEY_ENV, SecretRef
from killpoint.reference.lease import Fence
from killpoint.reference.operator_queue import queue_entry
from killpoint.reference.retention import keep_workflow
from killpoint.reference.settings import Settings
from killpoint.reference.steps import Steps
from killpoint.reference.store import CheckpointLog, Store
from killpoint.reference.tamper import stage

STORE = "reference.store"


def ensure_key(env: str = DEFAULT_KEY_ENV) -> SecretRef:
    """The checkpoint key's reference; a random key for this process (and the workers it forks)
    when none is set: a campaign's checkpoints need only outlive its own workers."""
    if not os.environ.get(env):
        os.environ[env] = secrets.token_hex(32)
    return SecretRef(env)


def open_store(handle: StoreHandle) -> Store:
    """The world's store, opened once and shared by every worker, reader and tamper of it."""
    ensure_key()
    return handle.shared.get(STORE, lambda: Store(handle.url, scratch=handle.scratch))


def artifacts_of(handle: StoreHandle) -> FolderArtifacts:
    return FolderArtifacts(handle.workdir / "artifacts")


class ReferenceEngine:
    """A worker of the reference engine for one scenario, on the world's shared store.

    A mutant swaps one part: `engine_class` (a resume seam overridden), `steps_class` (one
    kind of step, or the ledger's executor), the store's `fence` or checkpoint `log`, or the
    operator's `controls_class`."""

    engine_class: type[Engine] = Engine
    steps_class: type[Steps] = Steps
    controls_class: type[Controls] = Controls
    fence: Fence | None = None
    log: CheckpointLog | None = None

    def __init__(self, env: WorkerEnv, scenario: Scenario) -> None:
        store = open_store(env.store)
        if self.fence is not None or self.log is not None:
            store = store.using(fence=self.fence, log=self.log)
        self.store: Store = store
        self.engine = self.build(env, scenario)

    def build(self, env: WorkerEnv, scenario: Scenario) -> Engine:
        return self.engine_class(
            self.store,
            [scenario.workflow],
            scenario.make_adapters(env.http),
            artifacts=artifacts_of(env.store),
            clock=env.clock,
            versions=env.versions,
            settings=Settings(
                tenant=env.tenant, owner=env.owner, lease_ttl=env.lease_ttl, deploy=env.deploy
            ),
            hook=env.hook,
            steps=self.steps_class,
        )

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        return self.engine.start(scenario.workflow.name, workflow_id, input, scenario.limits)

    def resume(self, workflow_id: str) -> Outcome:
        return self.engine.resume(workflow_id)

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        self.engine.grant(workflow_id, gate, actor, ttl_s)

    def control(self, workflow_id: str, name: str, actor: str, reason: str) -> Outcome:
        """An operator's control (`harness.operator`), through this worker's engine."""
        return self.controls_class(self.engine, actor).act(name, workflow_id, reason)


class StoreReader:
    """Reads the reference store for the oracle; a checkpoint that fails its seal is shown
    as untrusted with only its row's fields, never parsed. It reads the operator queue and the
    audit trail of controls too (`protocol.QueueReader`, `protocol.AuditReader`)."""

    def __init__(self, store: Store, tenant: str, secret: SecretRef | None = None) -> None:
        self.store = store
        self.tenant = tenant
        self.secret = secret or SecretRef()

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]:
        key = self.secret.resolve()
        views = []
        rows = self.store.checkpoints(workflow_id)
        stored = self.store.outputs(workflow_id, 0, rows[-1].sequence) if rows else []
        outputs = _OutputsAt(stored)
        extra: dict[int, int] = {}  # bytes of the output rows each checkpoint committed
        for o in stored:
            size = len(o.step) + len(o.value) + len(o.sha256)
            extra[o.sequence] = extra.get(o.sequence, 0) + size
        for row in rows:
            base: dict[str, Any] = {
                "sequence": row.sequence,
                "state": row.state,
                "run_id": row.run_id,
                "fencing_token": row.fencing_token,
                "created_at": row.created_at,
                "size": len(row.body) + len(row.tag) + extra.get(row.sequence, 0),
            }
            try:
                cp = open_checkpoint(row, key, self.tenant)
            except IntegrityError as exc:
                views.append(
                    CheckpointRecord(**base, status="untrusted", reason=str(exc), trusted=False)
                )
                continue
            views.append(
                CheckpointRecord(
                    **base,
                    status=cp.status.value,
                    reason=cp.status_reason,
                    parent_run_id=cp.lineage.parent_run_id,
                    decision=cp.lineage.decision,
                    versions=cp.versions,
                    budget={k: float(v) for k, v in cp.budget.model_dump().items()},
                    approvals=[a.model_dump(mode="json") for a in cp.approvals],
                    outputs={**cp.outputs, **outputs.at(cp.outputs_ref.since, cp.sequence)},
                    input=cp.input,
                )
            )
        return views

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        return self.store.effects(workflow_id)

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        return self.store.approvals(workflow_id)

    def compacted_below(self, workflow_id: str) -> int:
        return self.store.compacted_below(workflow_id)

    def queued(self, workflow_id: str) -> QueuedRun | None:
        """The run's entry in the operator queue its tenant's operator reads
        (`engine.operator_queue`), as of the run's last write; None when it is not queued."""
        try:
            record = self.store.workflow(workflow_id, tenant=self.tenant)
        except (UnknownWorkflowError, WrongTenantError):
            return None
        key, now = self.secret.resolve(), record.updated_at
        entry = queue_entry(self.store, record, now=now, key=key)
        if entry is None:
            return None
        return QueuedRun(
            workflow_id=workflow_id,
            reason=entry.reason,
            detail=entry.detail,
            state=entry.state,
            in_doubt=list(entry.in_doubt),
            controls=list(entry.controls),
        )

    def audit(self, workflow_id: str) -> list[AuditedControl]:
        """The controls table's rows of the workflow (`engine.audit`), oldest first."""
        return [
            AuditedControl(
                control=row.control,
                actor=row.actor,
                at=row.at,
                from_sequence=row.from_sequence,
                to_sequence=row.to_sequence,
                to_status=row.to_status.value,
                fencing_token=row.fencing_token,
            )
            for row in audit_trail(self.store, workflow_id)
        ]


class _OutputsAt:
    """The output rows a checkpoint pins, for checkpoints read in order (one pass, not n²)."""

    def __init__(self, rows: list[StepOutput]) -> None:
        self.rows = rows
        self.since = -1
        self.next = 0
        self.seen: dict[str, JsonValue] = {}

    def at(self, since: int, upto: int) -> dict[str, JsonValue]:
        if since != self.since:  # a new run of the workflow: its outputs start over
            self.since, self.seen = since, {}
            self.next = next(
                (i for i, r in enumerate(self.rows) if r.sequence > since), len(self.rows)
            )
        while self.next < len(self.rows) and self.rows[self.next].sequence <= upto:
            row = self.rows[self.next]
            self.seen[row.step] = json.loads(row.value)
            self.next += 1
        return dict(self.seen)


def unverified_document(body: bytes) -> dict[str, Any]:
    """Parse a checkpoint body without trusting it: for display of rejected rows only."""
    return upgrade(parse_sealed(body))


def reference_factory(env: WorkerEnv, scenario: Scenario) -> ReferenceEngine:
    return ReferenceEngine(env, scenario)


def read_history(handle: StoreHandle, scenario: Scenario) -> StoreReader:
    """The store's records of the run (its rows carry their workflow: the scenario is unread)."""
    return StoreReader(open_store(handle), handle.tenant)


def tamper(handle: StoreHandle, workflow_id: str, kind: str) -> int | None:
    """Alter what the last worker left (the latest checkpoint, an output row, an artifact), as
    the harness's table of kinds describes; None declines a kind this engine cannot stage or
    that has nothing to alter in this run."""
    return stage(open_store(handle), artifacts_of(handle).root, workflow_id, kind, SecretRef())


def prepare(handle: StoreHandle) -> None:
    """Before workers are forked: open the store and compile every statement the engine runs,
    so each child inherits them compiled."""
    store = open_store(handle)
    store.warm()
    for statement in (*DELIVERY_STATEMENTS, *AUDIT_STATEMENTS):
        store.db.prepare(statement)


def reset(handle: StoreHandle) -> None:
    """Before each run: the store's rows and the artifact files, gone (`run.folders`)."""
    open_store(handle).clear()
    empty(handle.workdir / "artifacts")


QUEUE_STORE = "queue.sqlite"  # the campaign's operator queue, in its folder


def keep(handle: StoreHandle, workflow_id: str, folder: Path) -> None:
    """Copy one run that waits for a person to the campaign's queue store (`engine.keep`)."""
    target = handle.shared.get(
        f"reference.queue:{folder}", lambda: Store(f"sqlite:///{folder / QUEUE_STORE}")
    )
    keep_workflow(open_store(handle), target, workflow_id)


REFERENCE = framework_spec(
    "reference",
    reference_factory,
    reader=read_history,
    tamper=tamper,
    prepare=prepare,
    reset=reset,
    keep=keep,
)
