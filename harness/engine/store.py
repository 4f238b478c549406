"""The durable store: one interface over SQLite and PostgreSQL.

Every write of a worker is fenced: it runs in one transaction that first moves the `workflows` row
with a guarded `UPDATE … WHERE fencing_token = :mine AND lease unexpired [AND sequence = :seen]`.
If the guard matches no row, the transaction is rolled back and the caller learns why (stale
fencing token, lost compare-and-swap, expired lease). The store itself rejects the stale write;
no engine code has to remember to check.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError as SqlIntegrityError

from killpoint.harness.contract.errors import KillpointError
from killpoint.harness.contract.records import (
    ApprovalRecord,
    EffectRecord,
    EffectStatus,
    Receipt,
    RunStatus,
)
from killpoint.harness.engine import _schema as t
from killpoint.harness.engine import _statements as q
from killpoint.harness.engine._backends import begin_statement, build_engine, resolve_url
from killpoint.harness.engine._sql import Database, Row, Transaction, Tx
from killpoint.harness.engine.errors import (
    ConflictError,
    LeaseHeldError,
    StaleFenceError,
    UnknownWorkflowError,
)
from killpoint.harness.engine.model import Budget, StoredCheckpoint, WorkflowRecord


@dataclass(frozen=True)
class Lease:
    workflow_id: str
    owner: str
    token: int
    expires_at: float


class StepOutput(NamedTuple):
    """A step's small result as stored: canonical JSON and its hash."""

    sequence: int
    step: str
    value: str
    sha256: str


class NewCheckpoint(NamedTuple):
    """What a worker asks the store to commit at a boundary, with the outputs it made.

    A tuple, not a dataclass: one is built per step, and a frozen dataclass costs more to build
    than SQLite takes to store it."""

    sequence: int
    run_id: str
    state: str
    status: RunStatus
    status_reason: str
    schema_version: int
    tenant: str
    body: bytes
    tag: str
    budget: Budget
    outputs: tuple[StepOutput, ...] = ()


@dataclass(frozen=True)
class EffectLogRow:
    workflow_id: str
    operation_id: str
    status: EffectStatus
    fencing_token: int
    attempt: bool
    at: float
    detail: str


class Store:
    """Workflows, checkpoints, the effect ledger, artifacts and approvals on one database."""

    def __init__(
        self, url: str | None = None, *, schema: str | None = None, scratch: bool = False
    ) -> None:
        """`scratch`: a store that need survive only process death, a campaign's (see
        `build_engine`)."""
        self.url = resolve_url(url)
        self.schema = schema
        engine = build_engine(self.url, scratch=scratch)
        if schema is not None:
            with engine.begin() as conn:
                conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            engine = engine.execution_options(schema_translate_map={None: schema})
        self.engine: Engine = engine
        t.metadata.create_all(self.engine)
        self.db = Database(engine, begin_statement(self.url))
        self._warm = False

    def warm(self) -> None:
        """Compile every statement the engine runs, once: a forked worker then inherits them
        compiled instead of compiling a dozen of them before its first step."""
        if not self._warm:
            for statement in q.everything():
                self.db.prepare(statement)
            self._warm = True

    def after_fork(self) -> None:
        """Drop connections inherited from the parent process without closing them for it."""
        self.engine.dispose(close=False)
        self.db.after_fork()

    def close(self) -> None:
        self.db.close()
        self.engine.dispose()

    def _tx(self) -> Transaction:
        return self.db.transaction()

    # -- workflows and leases -------------------------------------------------------------

    def create_workflow(self, record: WorkflowRecord, first: NewCheckpoint) -> bool:
        """Insert a workflow and its checkpoint 1. False if it already exists (redelivery)."""
        try:
            with self._tx() as tx:
                tx.write(
                    q.INSERT_WORKFLOW, {**record.model_dump(mode="json"), "compacted_below": 0}
                )
                tx.write(q.INSERT_CHECKPOINT, _checkpoint_row(record, first, 0))
        except SqlIntegrityError:
            return False
        return True

    def workflow(self, workflow_id: str) -> WorkflowRecord:
        row = self.db.reading().execute(q.WORKFLOW, {"workflow_id": workflow_id}).first()
        if row is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r} in {self.url_for_humans}")
        row.pop("compacted_below")
        return WorkflowRecord.model_validate(row)

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
        """Take ownership if free, expired or already ours; always with a larger fencing token."""
        params = {"workflow_id": workflow_id, "owner": owner, "now": now, "expires_at": now + ttl}
        with self._tx() as tx:
            moved = tx.write(q.ACQUIRE_LEASE, params)
            row = tx.execute(q.LEASE_ROW, {"workflow_id": workflow_id}).first()
        if row is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        if not moved:
            raise LeaseHeldError(
                f"workflow {workflow_id!r} is leased to {row['lease_owner']} "
                f"until {row['lease_expires_at']:.3f}"
            )
        return Lease(workflow_id, owner, int(row["fencing_token"]), now + ttl)

    def renew_lease(self, lease: Lease, now: float, ttl: float) -> Lease:
        """Extend a lease we still hold; a lapsed or stolen one is refused like any write."""
        with self._tx() as tx:
            self._guard(tx, lease, now, extend_to=now + ttl)
        return Lease(lease.workflow_id, lease.owner, lease.token, now + ttl)

    def release_lease(self, lease: Lease, now: float) -> None:
        with self._tx() as tx:  # the fenced move itself lets go: one statement
            self._guard(tx, lease, now, lease_owner=None, lease_expires_at=None)

    def _guard(
        self,
        tx: Tx,
        lease: Lease,
        now: float,
        *,
        expect_sequence: int | None = None,
        extend_to: float | None = None,
        spend_attempt: bool = False,
        **values: Any,
    ) -> None:
        """Fence a write: move the workflow row only if our token, lease and view still hold."""
        if extend_to is not None:
            values["lease_expires_at"] = extend_to
        values["updated_at"] = now
        shape = q.guarded_update(expect_sequence is not None, tuple(sorted(values)), spend_attempt)
        values.update(  # the parameters: each value by its column's name, and the guard's
            g_workflow_id=lease.workflow_id,
            g_token=lease.token,
            g_owner=lease.owner,
            g_now=now,
            g_sequence=expect_sequence,
        )
        if tx.write(shape, values) == 1:
            return
        row = tx.execute(q.LEASE_ROW, {"workflow_id": lease.workflow_id}).first()
        if row is None:
            raise UnknownWorkflowError(f"no workflow {lease.workflow_id!r}")
        if row["fencing_token"] != lease.token or row["lease_owner"] != lease.owner:
            raise StaleFenceError(
                f"fencing token {lease.token} of {lease.owner} is stale: the workflow is at "
                f"token {row['fencing_token']} held by {row['lease_owner']}"
            )
        expires = row["lease_expires_at"]
        if expires is None or expires <= now:
            raise StaleFenceError(f"lease of {lease.owner} expired at {expires}")
        raise ConflictError(
            f"compare-and-swap lost: expected sequence {expect_sequence}, the workflow is at "
            f"{row['sequence']}"
        )

    # -- checkpoints ----------------------------------------------------------------------

    def commit_checkpoint(
        self, lease: Lease, now: float, cp: NewCheckpoint, *, extend_to: float | None = None
    ) -> None:
        """CAS from sequence n-1 to n and append the checkpoint row, in one transaction."""
        with self._tx() as tx:
            self._guard(
                tx,
                lease,
                now,
                expect_sequence=cp.sequence - 1,
                extend_to=extend_to,
                **_position(cp),
            )
            try:
                tx.write(q.INSERT_CHECKPOINT, _checkpoint_row_new(lease, cp, now))
            except SqlIntegrityError as exc:
                raise ConflictError(
                    f"checkpoint {cp.sequence} of {lease.workflow_id!r} already exists"
                ) from exc
            insert_outputs(tx, lease.workflow_id, cp)

    def latest_checkpoint(self, workflow_id: str) -> StoredCheckpoint | None:
        row = self.db.reading().execute(q.LATEST_CHECKPOINT, {"workflow_id": workflow_id}).first()
        return None if row is None else _stored(row)

    def checkpoints(self, workflow_id: str) -> list[StoredCheckpoint]:
        rows = self.db.reading().execute(q.CHECKPOINTS, {"workflow_id": workflow_id}).rows
        return [_stored(r) for r in rows]

    def outputs(self, workflow_id: str, after: int = 0, upto: int = 2**31 - 1) -> list[StepOutput]:
        """The outputs committed by checkpoints `after` < sequence <= `upto`, in order."""
        params = {"workflow_id": workflow_id, "after": after, "upto": upto}
        return [StepOutput(**r) for r in self.db.reading().execute(q.OUTPUTS, params).rows]

    def compacted_below(self, workflow_id: str) -> int:
        value = self.db.reading().execute(q.COMPACTED_BELOW, {"workflow_id": workflow_id}).scalar()
        return int(value or 0)

    def compact(self, now: float, keep_window_s: float) -> int:
        """Drop checkpoint rows older than the window, always keeping each workflow's latest.

        Effect rows and their log are never dropped: receipts are needed for business
        reconciliation long after the detailed replay history is gone.
        """
        dropped = 0
        with self._tx() as tx:
            for row in tx.execute(q.POSITIONS).rows:
                doomed = {
                    "workflow_id": row["workflow_id"],
                    "latest": row["sequence"],
                    "before": now - keep_window_s,
                }
                highest = tx.execute(q.HIGHEST_DOOMED, doomed).scalar()
                if highest is None:
                    continue
                dropped += tx.write(q.DELETE_DOOMED, doomed)
                below = {"workflow_id": row["workflow_id"], "below": highest + 1}
                tx.write(q.SET_COMPACTED_BELOW, below)
        return dropped

    # -- effect ledger --------------------------------------------------------------------

    def prepare_effect(self, lease: Lease, now: float, record: EffectRecord) -> EffectRecord:
        """Write the intent ahead of the call; an existing intent for the operation wins."""
        with self._tx() as tx:
            self._guard(tx, lease, now)
            existing = _effect(tx, record.workflow_id, record.operation_id)
            if existing is not None:
                return existing
            tx.write(q.INSERT_EFFECT, _effect_row(record, now))
            _log(tx, lease, record.operation_id, record.status, now, attempt=False)
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
            self._guard(tx, lease, now, spend_attempt=attempt)
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
            _log(tx, lease, operation_id, status, now, attempt=attempt, detail=reason)
        return _effect_record(moved)

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        rows = self.db.reading().execute(q.EFFECTS, {"workflow_id": workflow_id}).rows
        return [_effect_record(r) for r in rows]

    def effect_log(self, workflow_id: str) -> list[EffectLogRow]:
        rows = self.db.reading().execute(q.EFFECT_LOG, {"workflow_id": workflow_id}).rows
        return [
            EffectLogRow(
                workflow_id=r["workflow_id"],
                operation_id=r["operation_id"],
                status=EffectStatus(r["status"]),
                fencing_token=r["fencing_token"],
                attempt=bool(r["attempt"]),
                at=r["at"],
                detail=r["detail"],
            )
            for r in rows
        ]

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
        key = {"workflow_id": lease.workflow_id, "step": step}
        with self._tx() as tx:
            self._guard(tx, lease, now)
            tx.write(q.DELETE_ARTIFACT, key)
            tx.write(
                q.INSERT_ARTIFACT,
                {
                    **key,
                    "sha256": sha256,
                    "uri": uri,
                    "media_type": media_type,
                    "size": size,
                    "created_at": now,
                },
            )

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
        key = {"workflow_id": lease.workflow_id, "gate": gate}
        with self._tx() as tx:
            self._guard(tx, lease, now)
            tx.write(q.DELETE_APPROVAL, key)
            tx.write(
                q.INSERT_APPROVAL,
                {
                    **key,
                    "status": "requested",
                    "scope": scope,
                    "policy_version": policy_version,
                    "payload": json.dumps(payload, sort_keys=True),
                    "requested_at": now,
                },
            )

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
        return [
            ApprovalRecord.model_validate({**r, "payload": json.loads(r["payload"])}) for r in rows
        ]

    @property
    def url_for_humans(self) -> str:
        from sqlalchemy import make_url

        shown = make_url(self.url).render_as_string(hide_password=True)
        return shown if self.schema is None else f"{shown} (schema {self.schema})"


def insert_outputs(tx: Tx, workflow_id: str, cp: NewCheckpoint) -> None:
    for out in cp.outputs:
        tx.write(
            q.INSERT_OUTPUT,
            {
                "workflow_id": workflow_id,
                "sequence": out.sequence,
                "step": out.step,
                "value": out.value,
                "sha256": out.sha256,
            },
        )


def _position(cp: NewCheckpoint) -> dict[str, Any]:
    return {
        "sequence": cp.sequence,
        "state": cp.state,
        "status": cp.status.value,
        "status_reason": cp.status_reason,
        "attempts_left": cp.budget.attempts_left,
        "steps_left": cp.budget.steps_left,
        "cost_left": cp.budget.cost_left,
    }


def _checkpoint_row(record: WorkflowRecord, cp: NewCheckpoint, token: int) -> dict[str, Any]:
    return {
        "workflow_id": record.workflow_id,
        "sequence": cp.sequence,
        "run_id": cp.run_id,
        "state": cp.state,
        "schema_version": cp.schema_version,
        "tenant": cp.tenant,
        "body": cp.body,
        "tag": cp.tag,
        "fencing_token": token,
        "created_at": record.created_at,
    }


def _checkpoint_row_new(lease: Lease, cp: NewCheckpoint, now: float) -> dict[str, Any]:
    return {
        "workflow_id": lease.workflow_id,
        "sequence": cp.sequence,
        "run_id": cp.run_id,
        "state": cp.state,
        "schema_version": cp.schema_version,
        "tenant": cp.tenant,
        "body": cp.body,
        "tag": cp.tag,
        "fencing_token": lease.token,
        "created_at": now,
    }


def _effect_row(record: EffectRecord, now: float) -> dict[str, Any]:
    row = record.model_dump(mode="json", exclude={"receipt"})
    row["args"] = json.dumps(record.args, sort_keys=True)
    row["receipt"] = record.receipt.model_dump_json() if record.receipt else None
    row["created_at"] = now
    return row


def _effect(tx: Tx, workflow_id: str, operation_id: str) -> EffectRecord | None:
    params = {"workflow_id": workflow_id, "operation_id": operation_id}
    row = tx.execute(q.EFFECT, params).first()
    return None if row is None else _effect_record(row)


def _stored(row: Row) -> StoredCheckpoint:
    row["body"] = bytes(row["body"])  # a driver may hand back a memoryview
    return StoredCheckpoint.model_validate(row)


def _effect_record(row: Row) -> EffectRecord:
    fields = dict(row)
    fields.pop("created_at")
    fields["args"] = json.loads(fields["args"])
    fields["receipt"] = (
        Receipt.model_validate_json(fields["receipt"]) if fields["receipt"] else None
    )
    return EffectRecord.model_validate(fields)


def _log(
    tx: Tx,
    lease: Lease,
    operation_id: str,
    status: EffectStatus,
    now: float,
    *,
    attempt: bool,
    detail: str = "",
) -> None:
    tx.write(
        q.INSERT_LOG,
        {
            "workflow_id": lease.workflow_id,
            "operation_id": operation_id,
            "status": status.value,
            "fencing_token": lease.token,
            "attempt": attempt,
            "at": now,
            "detail": detail,
        },
    )
