"""The durable store: one interface over SQLite and PostgreSQL.

Every write of a worker runs in one transaction that its `Fence` guards first (`lease.py`,
where a lease is acquired, renewed and fenced); the rows themselves are mapped in `rows.py`,
and a checkpoint's rows are written by the `CheckpointLog`. The fence and the log are parts a
store is given, so a broken engine built on the same database (a mutant) replaces one of them
and nothing else (`Store.using`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError as SqlIntegrityError
from sqlalchemy.pool import QueuePool

from killpoint.contract.errors import KillpointError
from killpoint.contract.records import (
    ApprovalRecord,
    EffectRecord,
    EffectStatus,
    Receipt,
    RunStatus,
)
from killpoint.reference import _schema as t
from killpoint.reference import _statements as q
from killpoint.reference import lease as leases
from killpoint.reference import retention
from killpoint.reference._backends import begin_statement, build_engine, resolve_url
from killpoint.reference._sql import Database, Transaction, Tx
from killpoint.reference.checkpoint import NewCheckpoint, StepOutput, StoredCheckpoint
from killpoint.reference.errors import ConflictError, UnknownWorkflowError, WrongTenantError
from killpoint.reference.lease import Fence, Lease
from killpoint.reference.rows import (
    EffectLogRow,
    WorkflowRecord,
    approval_record,
    approval_request_row,
    artifact_row,
    checkpoint_row,
    effect_record,
    effect_row,
    log_entry,
    log_row,
    output_row,
    step_output,
    stored_checkpoint,
    workflow_record,
    workflow_row,
)

__all__ = ["CheckpointLog", "Store", "resolve_url"]


class CheckpointLog:
    """Writes a commit's rows: the sealed checkpoint and the outputs it made, append-only."""

    def append(self, tx: Tx, lease: Lease, now: float, cp: NewCheckpoint) -> None:
        """A second checkpoint at a sequence is refused, whatever let it get this far."""
        try:
            tx.write(q.INSERT_CHECKPOINT, checkpoint_row(lease.workflow_id, cp, lease.token, now))
        except SqlIntegrityError as exc:
            raise ConflictError(
                f"checkpoint {cp.sequence} of {lease.workflow_id!r} already exists"
            ) from exc
        for out in cp.outputs:
            tx.write(q.INSERT_OUTPUT, output_row(lease.workflow_id, out))

    def erase(self, tx: Tx, workflow_id: str, sequence: int) -> None:
        """Remove what a commit at `sequence` wrote. The reference never needs to: its
        compare-and-swap gives each sequence one writer."""
        at = {"workflow_id": workflow_id, "sequence": sequence}
        tx.write(q.DELETE_CHECKPOINT_AT, at)
        tx.write(q.DELETE_OUTPUTS_AT, at)


class Store:
    """Workflows, checkpoints, the effect ledger, artifacts and approvals on one database.

    A context manager: `with Store(url) as store:` closes its connections on the way out."""

    def __init__(
        self,
        url: str | None = None,
        *,
        schema: str | None = None,
        scratch: bool = False,
        fence: Fence | None = None,
        log: CheckpointLog | None = None,
    ) -> None:
        """`scratch`: a store that need survive only process death, a campaign's (see
        `build_engine`)."""
        self.url = resolve_url(url)
        self.schema = schema
        self.fence = fence or Fence()
        self.log = log or CheckpointLog()
        engine = build_engine(self.url, scratch=scratch)
        if schema is not None:
            with engine.begin() as conn:
                conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            engine = engine.execution_options(schema_translate_map={None: schema})
        self.engine: Engine = engine
        t.metadata.create_all(self.engine)
        if isinstance(engine.pool, QueuePool):  # the store's own connections are detached
            engine.pool.dispose()  # from the pool (`_sql`): nothing pooled for a fork to drop
        self.db = Database(engine, begin_statement(self.url))
        self._warm = False

    def using(self, *, fence: Fence | None = None, log: CheckpointLog | None = None) -> Store:
        """This store's database and connections, guarded by another fence or written by
        another log: how a broken engine runs on the same world as the reference."""
        view = copy.copy(self)
        view.fence = fence or self.fence
        view.log = log or self.log
        return view

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def warm(self) -> None:
        """Compile every statement the engine runs, once: a forked worker then inherits them
        compiled instead of compiling a dozen of them before its first step."""
        if not self._warm:
            for statement in (*q.everything(), *_CLEAR):
                self.db.prepare(statement)
            self._warm = True

    def after_fork(self) -> None:
        """Drop connections inherited from the parent process without closing them for it;
        an empty pool is kept (a new one costs a forked worker ~1.5 ms)."""
        pool = self.engine.pool
        if not isinstance(pool, QueuePool) or pool.checkedin() or pool.checkedout():
            self.engine.dispose(close=False)
        self.db.after_fork()

    def close(self) -> None:
        self.db.close()
        self.engine.dispose()

    def clear(self) -> None:
        """Delete every row of every table, in one transaction: the store as if new, without the
        cost of a new database (how a campaign isolates its runs)."""
        with self._tx() as tx:
            for statement in _CLEAR:
                tx.write(statement, {})

    def _tx(self) -> Transaction:
        return self.db.transaction()

    # -- workflows and leases -------------------------------------------------------------

    def create_workflow(self, record: WorkflowRecord, first: NewCheckpoint) -> bool:
        """Insert a workflow and its checkpoint 1. False if it already exists (redelivery)."""
        try:
            with self._tx() as tx:
                tx.write(q.INSERT_WORKFLOW, workflow_row(record))
                row = checkpoint_row(record.workflow_id, first, 0, record.created_at)
                tx.write(q.INSERT_CHECKPOINT, row)
        except SqlIntegrityError:
            return False
        return True

    def workflow(self, workflow_id: str, *, tenant: str | None = None) -> WorkflowRecord:
        """The workflow row; with `tenant`, another tenant's workflow is refused
        (`WrongTenantError`) and nothing of it, not even its tenant's name, is returned."""
        row = self.db.reading().execute(q.WORKFLOW, {"workflow_id": workflow_id}).first()
        if row is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r} in {self.url_for_humans}")
        if tenant is not None and row["tenant"] != tenant:
            raise WrongTenantError(f"workflow {workflow_id!r} does not belong to tenant {tenant!r}")
        return workflow_record(row)

    def quarantine(self, workflow_id: str, reason: str, now: float) -> None:
        """Flag a workflow whose checkpoint cannot be trusted; no worker will run it."""
        params = {
            "workflow_id": workflow_id,
            "status": RunStatus.QUARANTINED.value,
            "reason": reason,
            "now": now,
        }
        with self._tx() as tx:
            tx.write(q.QUARANTINE, params)

    def workflow_ids(self) -> list[str]:
        return [str(v) for v in self.db.reading().execute(q.WORKFLOW_IDS).scalars()]

    def acquire_lease(self, workflow_id: str, owner: str, ttl: float, now: float) -> Lease:
        """Take ownership if free, expired or already ours (`lease.acquire`)."""
        with self._tx() as tx:
            return leases.acquire(tx, workflow_id, owner, ttl, now)

    def renew_lease(self, lease: Lease, now: float, ttl: float) -> Lease:
        """Extend a lease we still hold, through this store's fence (`lease.renew`)."""
        with self._tx() as tx:
            return leases.renew(tx, self.fence, lease, now, ttl)

    def release_lease(self, lease: Lease, now: float) -> None:
        with self._tx() as tx:
            leases.release(tx, self.fence, lease, now)

    # -- checkpoints ----------------------------------------------------------------------

    def commit_checkpoint(
        self, lease: Lease, now: float, cp: NewCheckpoint, *, extend_to: float | None = None
    ) -> None:
        """CAS from sequence n-1 to n and append the checkpoint's rows, in one transaction."""
        with self._tx() as tx:
            self.fence.compare_and_swap(tx, lease, now, cp, extend_to=extend_to)
            self.log.append(tx, lease, now, cp)

    def latest_checkpoint(self, workflow_id: str) -> StoredCheckpoint | None:
        row = self.db.reading().execute(q.LATEST_CHECKPOINT, {"workflow_id": workflow_id}).first()
        return None if row is None else stored_checkpoint(row)

    def checkpoints(self, workflow_id: str) -> list[StoredCheckpoint]:
        rows = self.db.reading().execute(q.CHECKPOINTS, {"workflow_id": workflow_id}).rows
        return [stored_checkpoint(r) for r in rows]

    def outputs(self, workflow_id: str, after: int = 0, upto: int = 2**31 - 1) -> list[StepOutput]:
        """The outputs committed by checkpoints `after` < sequence <= `upto`, in order."""
        params = {"workflow_id": workflow_id, "after": after, "upto": upto}
        return [step_output(r) for r in self.db.reading().execute(q.OUTPUTS, params).rows]

    def compacted_below(self, workflow_id: str) -> int:
        value = self.db.reading().execute(q.COMPACTED_BELOW, {"workflow_id": workflow_id}).scalar()
        return int(value or 0)

    def compact(self, now: float, keep_window_s: float, *, tenant: str) -> int:
        """Drop one tenant's checkpoint rows older than the window (`retention.compact`)."""
        with self._tx() as tx:
            return retention.compact(tx, now, keep_window_s, tenant=tenant)

    # -- effect ledger --------------------------------------------------------------------

    def prepare_effect(self, lease: Lease, now: float, record: EffectRecord) -> EffectRecord:
        """Write the intent ahead of the call; an existing intent for the operation wins."""
        with self._tx() as tx:
            self.fence.guard(tx, lease, now)
            existing = _effect(tx, record.workflow_id, record.operation_id)
            if existing is not None:
                return existing
            tx.write(q.INSERT_EFFECT, effect_row(record, now))
            log = log_row(lease, record.operation_id, record.status, now, False, "")
            tx.write(q.INSERT_LOG, log)
        return record

    def mark_effect(
        self,
        lease: Lease,
        now: float,
        operation_id: str,
        status: EffectStatus,
        *,
        expect: Sequence[EffectStatus],
        receipt: Receipt | None = None,
        reason: str = "",
        attempt: bool = False,
    ) -> EffectRecord:
        """Move one ledger row between statuses; `attempt` also spends one durable attempt."""
        with self._tx() as tx:
            self.fence.guard(tx, lease, now, spend_attempt=attempt)
            params: dict[str, Any] = {
                "v_status": status.value,
                "v_updated_at": now,
                "v_reason": reason,
                "e_workflow_id": lease.workflow_id,
                "e_operation_id": operation_id,
            }
            params.update({f"e_expect_{i}": s.value for i, s in enumerate(expect)})
            if receipt is not None:
                params["v_receipt"] = receipt.model_dump_json()
            shape = q.effect_update(receipt is not None, attempt, len(expect))
            moved = tx.execute(shape, params).first()  # the row as it is now (RETURNING)
            if moved is None:
                current = _effect(tx, lease.workflow_id, operation_id)
                raise ConflictError(
                    f"effect {operation_id!r} is {current.status if current else 'absent'}, "
                    f"not one of {[s.value for s in expect]}"
                )
            tx.write(q.INSERT_LOG, log_row(lease, operation_id, status, now, attempt, reason))
        return effect_record(moved)

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        rows = self.db.reading().execute(q.EFFECTS, {"workflow_id": workflow_id}).rows
        return [effect_record(r) for r in rows]

    def effect_log(self, workflow_id: str) -> list[EffectLogRow]:
        rows = self.db.reading().execute(q.EFFECT_LOG, {"workflow_id": workflow_id}).rows
        return [log_entry(r) for r in rows]

    # -- artifacts and approvals ------------------------------------------------------------

    def record_artifact(
        self,
        lease: Lease,
        now: float,
        step: str,
        sha256: str,
        uri: str,
        media_type: str,
        size: int,
    ) -> None:
        row = artifact_row(lease.workflow_id, step, sha256, uri, media_type, size, now)
        with self._tx() as tx:
            self.fence.guard(tx, lease, now)
            tx.write(q.DELETE_ARTIFACT, {"workflow_id": lease.workflow_id, "step": step})
            tx.write(q.INSERT_ARTIFACT, row)

    def artifact(self, workflow_id: str, step: str) -> tuple[str, str, str] | None:
        """(sha256, uri, media_type) of the artifact a step recorded, if any."""
        key = {"workflow_id": workflow_id, "step": step}
        row = self.db.reading().execute(q.ARTIFACT, key).first()
        return None if row is None else (row["sha256"], row["uri"], row["media_type"])

    def request_approval(
        self,
        lease: Lease,
        now: float,
        gate: str,
        scope: str,
        policy_version: str,
        payload: dict[str, Any],
    ) -> None:
        row = approval_request_row(lease.workflow_id, gate, scope, policy_version, payload, now)
        with self._tx() as tx:
            self.fence.guard(tx, lease, now)
            tx.write(q.DELETE_APPROVAL, {"workflow_id": lease.workflow_id, "gate": gate})
            tx.write(q.INSERT_APPROVAL, row)

    def grant_approval(
        self, workflow_id: str, gate: str, actor: str, expires_at: float
    ) -> ApprovalRecord:
        """A human's answer; only a pending request can be granted."""
        params = {
            "workflow_id": workflow_id,
            "gate": gate,
            "actor": actor,
            "expires_at": expires_at,
        }
        with self._tx() as tx:
            moved = tx.write(q.GRANT_APPROVAL, params)
        if not moved:
            raise KillpointError(f"no pending approval request {gate!r} on {workflow_id!r}")
        return next(a for a in self.approvals(workflow_id) if a.gate == gate)

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        rows = self.db.reading().execute(q.APPROVALS, {"workflow_id": workflow_id}).rows
        return [approval_record(r) for r in rows]

    @property
    def url_for_humans(self) -> str:
        from sqlalchemy import make_url

        shown = make_url(self.url).render_as_string(hide_password=True)
        return shown if self.schema is None else f"{shown} (schema {self.schema})"


_CLEAR = tuple(table.delete() for table in reversed(t.metadata.sorted_tables))


def _effect(tx: Tx, workflow_id: str, operation_id: str) -> EffectRecord | None:
    params = {"workflow_id": workflow_id, "operation_id": operation_id}
    row = tx.execute(q.EFFECT, params).first()
    return None if row is None else effect_record(row)
