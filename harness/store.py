"""The durable store: one interface over SQLite and PostgreSQL.

Every write of a worker is fenced: it runs in one transaction that first moves the `workflows` row
with a guarded `UPDATE … WHERE fencing_token = :mine AND lease unexpired [AND sequence = :seen]`.
If the guard matches no row, the transaction is rolled back and the caller learns why (stale
fencing token, lost compare-and-swap, expired lease). The store itself rejects the stale write;
no engine code has to remember to check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, Update, bindparam, delete, insert, select, text, update
from sqlalchemy.exc import IntegrityError as SqlIntegrityError
from sqlalchemy.sql.elements import ClauseElement

from harness import _schema as t
from harness._backends import build_engine, resolve_url
from harness.errors import (
    ConflictError,
    KillpointError,
    LeaseHeldError,
    StaleFenceError,
    UnknownWorkflowError,
)
from harness.model import (
    ApprovalRecord,
    Budget,
    EffectRecord,
    EffectStatus,
    Receipt,
    RunStatus,
    StoredCheckpoint,
    WorkflowRecord,
)


@dataclass(frozen=True)
class Lease:
    workflow_id: str
    owner: str
    token: int
    expires_at: float


@dataclass(frozen=True)
class NewCheckpoint:
    """What a worker asks the store to commit at a boundary."""

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

    def __init__(self, url: str | None = None, *, schema: str | None = None) -> None:
        self.url = resolve_url(url)
        self.schema = schema
        engine = build_engine(self.url)
        if schema is not None:
            with engine.begin() as conn:
                conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            engine = engine.execution_options(schema_translate_map={None: schema})
        self.engine: Engine = engine
        t.metadata.create_all(self.engine)

    def after_fork(self) -> None:
        """Drop connections inherited from the parent process without closing them for it."""
        self.engine.dispose(close=False)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    # -- workflows and leases -------------------------------------------------------------

    def create_workflow(
        self,
        record: WorkflowRecord,
        first: NewCheckpoint,
    ) -> bool:
        """Insert a workflow and its checkpoint 1. False if it already exists (redelivery)."""
        try:
            with self._tx() as conn:
                conn.execute(insert(t.workflows).values(**record.model_dump()))
                conn.execute(insert(t.checkpoints).values(**_checkpoint_row(record, first, 0)))
        except SqlIntegrityError:
            return False
        return True

    def workflow(self, workflow_id: str) -> WorkflowRecord:
        with self.engine.connect() as conn:
            row = conn.execute(_WORKFLOW, {"workflow_id": workflow_id}).mappings().first()
        if row is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r} in {self.url_for_humans}")
        fields = dict(row)
        fields.pop("compacted_below")
        return WorkflowRecord.model_validate(fields)

    def quarantine(self, workflow_id: str, reason: str, now: float) -> None:
        """Flag a workflow whose checkpoint cannot be trusted; no worker will run it."""
        with self._tx() as conn:
            conn.execute(
                update(t.workflows)
                .where(t.workflows.c.workflow_id == workflow_id)
                .values(status=RunStatus.QUARANTINED.value, status_reason=reason, updated_at=now)
            )

    def workflow_ids(self) -> list[str]:
        with self.engine.connect() as conn:
            return list(conn.execute(select(t.workflows.c.workflow_id)).scalars())

    def acquire_lease(self, workflow_id: str, owner: str, ttl: float, now: float) -> Lease:
        """Take ownership if free, expired or already ours; always with a larger fencing token."""
        w = t.workflows.c
        with self._tx() as conn:
            moved = conn.execute(
                update(t.workflows)
                .where(w.workflow_id == workflow_id)
                .where(
                    (w.lease_owner.is_(None))
                    | (w.lease_expires_at <= now)
                    | (w.lease_owner == owner)
                )
                .values(
                    lease_owner=owner,
                    lease_expires_at=now + ttl,
                    fencing_token=w.fencing_token + 1,
                    updated_at=now,
                )
            ).rowcount
            row = conn.execute(
                select(w.fencing_token, w.lease_owner, w.lease_expires_at).where(
                    w.workflow_id == workflow_id
                )
            ).first()
        if row is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        if not moved:
            raise LeaseHeldError(
                f"workflow {workflow_id!r} is leased to {row.lease_owner} "
                f"until {row.lease_expires_at:.3f}"
            )
        return Lease(workflow_id, owner, int(row.fencing_token), now + ttl)

    def renew_lease(self, lease: Lease, now: float, ttl: float) -> Lease:
        """Extend a lease we still hold; a lapsed or stolen one is refused like any write."""
        with self._tx() as conn:
            self._guard(conn, lease, now, extend_to=now + ttl)
        return Lease(lease.workflow_id, lease.owner, lease.token, now + ttl)

    def release_lease(self, lease: Lease, now: float) -> None:
        with self._tx() as conn:
            self._guard(conn, lease, now)
            conn.execute(
                update(t.workflows)
                .where(t.workflows.c.workflow_id == lease.workflow_id)
                .values(lease_owner=None, lease_expires_at=None)
            )

    def _guard(
        self,
        conn: Connection,
        lease: Lease,
        now: float,
        *,
        expect_sequence: int | None = None,
        extend_to: float | None = None,
        **values: Any,
    ) -> None:
        """Fence a write: move the workflow row only if our token, lease and view still hold."""
        w = t.workflows.c
        if extend_to is not None:
            values["lease_expires_at"] = extend_to
        values["updated_at"] = now
        if any(isinstance(v, ClauseElement) for v in values.values()):
            stmt = (
                update(t.workflows)
                .where(w.workflow_id == lease.workflow_id)
                .where(w.fencing_token == lease.token)
                .where(w.lease_owner == lease.owner)
                .where(w.lease_expires_at > now)
            )
            if expect_sequence is not None:
                stmt = stmt.where(w.sequence == expect_sequence)
            moved = conn.execute(stmt.values(**values)).rowcount
        else:  # the hot path: one statement object per shape, compiled once
            params = {f"v_{k}": v for k, v in values.items()}
            params.update(
                g_workflow_id=lease.workflow_id,
                g_token=lease.token,
                g_owner=lease.owner,
                g_now=now,
            )
            if expect_sequence is not None:
                params["g_sequence"] = expect_sequence
            shape = _guarded_update(expect_sequence is not None, tuple(sorted(values)))
            moved = conn.execute(shape, params).rowcount
        if moved == 1:
            return
        row = conn.execute(
            select(w.fencing_token, w.lease_owner, w.lease_expires_at, w.sequence).where(
                w.workflow_id == lease.workflow_id
            )
        ).first()
        if row is None:
            raise UnknownWorkflowError(f"no workflow {lease.workflow_id!r}")
        if row.fencing_token != lease.token or row.lease_owner != lease.owner:
            raise StaleFenceError(
                f"fencing token {lease.token} of {lease.owner} is stale: the workflow is at "
                f"token {row.fencing_token} held by {row.lease_owner}"
            )
        if row.lease_expires_at is None or row.lease_expires_at <= now:
            raise StaleFenceError(f"lease of {lease.owner} expired at {row.lease_expires_at}")
        raise ConflictError(
            f"compare-and-swap lost: expected sequence {expect_sequence}, the workflow is at "
            f"{row.sequence}"
        )

    # -- checkpoints ----------------------------------------------------------------------

    def commit_checkpoint(
        self, lease: Lease, now: float, cp: NewCheckpoint, *, extend_to: float | None = None
    ) -> None:
        """CAS from sequence n-1 to n and append the checkpoint row, in one transaction."""
        with self._tx() as conn:
            self._guard(
                conn,
                lease,
                now,
                expect_sequence=cp.sequence - 1,
                extend_to=extend_to,
                **_position(cp),
            )
            try:
                conn.execute(_INSERT_CHECKPOINT, _checkpoint_row_new(lease, cp, now))
            except SqlIntegrityError as exc:
                raise ConflictError(
                    f"checkpoint {cp.sequence} of {lease.workflow_id!r} already exists"
                ) from exc

    def latest_checkpoint(self, workflow_id: str) -> StoredCheckpoint | None:
        with self.engine.connect() as conn:
            row = conn.execute(_LATEST_CHECKPOINT, {"workflow_id": workflow_id}).mappings().first()
        return None if row is None else StoredCheckpoint.model_validate(dict(row))

    def checkpoints(self, workflow_id: str) -> list[StoredCheckpoint]:
        with self.engine.connect() as conn:
            rows = conn.execute(_CHECKPOINTS, {"workflow_id": workflow_id}).mappings()
            return [StoredCheckpoint.model_validate(dict(r)) for r in rows]

    def compacted_below(self, workflow_id: str) -> int:
        w = t.workflows.c
        with self.engine.connect() as conn:
            value = conn.execute(
                select(w.compacted_below).where(w.workflow_id == workflow_id)
            ).scalar()
        return int(value or 0)

    def compact(self, now: float, keep_window_s: float) -> int:
        """Drop checkpoint rows older than the window, always keeping each workflow's latest.

        Effect rows and their log are never dropped: receipts are needed for business
        reconciliation long after the detailed replay history is gone.
        """
        c, w = t.checkpoints.c, t.workflows.c
        dropped = 0
        with self._tx() as conn:
            for wf_id, latest in conn.execute(select(w.workflow_id, w.sequence)).all():
                doomed = (
                    (c.workflow_id == wf_id)
                    & (c.sequence < latest)
                    & (c.created_at < now - keep_window_s)
                )
                highest = conn.execute(
                    select(c.sequence).where(doomed).order_by(c.sequence.desc()).limit(1)
                ).scalar()
                if highest is None:
                    continue
                dropped += conn.execute(delete(t.checkpoints).where(doomed)).rowcount
                conn.execute(
                    update(t.workflows)
                    .where(w.workflow_id == wf_id)
                    .values(compacted_below=highest + 1)
                )
        return dropped

    # -- effect ledger --------------------------------------------------------------------

    def prepare_effect(self, lease: Lease, now: float, record: EffectRecord) -> EffectRecord:
        """Write the intent ahead of the call; an existing intent for the operation wins."""
        with self._tx() as conn:
            self._guard(conn, lease, now)
            existing = _effect(conn, record.workflow_id, record.operation_id)
            if existing is not None:
                return existing
            conn.execute(insert(t.effects).values(**_effect_row(record, now)))
            _log(conn, lease, record.operation_id, record.status, now, attempt=False)
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
        with self._tx() as conn:
            extra: dict[str, Any] = {}
            if attempt:
                extra["attempts_left"] = t.workflows.c.attempts_left - 1
            self._guard(conn, lease, now, **extra)
            params: dict[str, Any] = {
                "v_status": status.value,
                "v_updated_at": now,
                "v_reason": reason,
                "e_workflow_id": lease.workflow_id,
                "e_operation_id": operation_id,
                "e_expect": [s.value for s in expect],
            }
            if receipt is not None:
                params["v_receipt"] = receipt.model_dump_json()
            moved = conn.execute(_effect_update(receipt is not None, attempt), params).rowcount
            if not moved:
                current = _effect(conn, lease.workflow_id, operation_id)
                raise ConflictError(
                    f"effect {operation_id!r} is {current.status if current else 'absent'}, "
                    f"not one of {[s.value for s in expect]}"
                )
            _log(conn, lease, operation_id, status, now, attempt=attempt, detail=reason)
            result = _effect(conn, lease.workflow_id, operation_id)
        assert result is not None
        return result

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        with self.engine.connect() as conn:
            rows = conn.execute(_EFFECTS, {"workflow_id": workflow_id}).mappings()
            return [_effect_record(r) for r in rows]

    def effect_log(self, workflow_id: str) -> list[EffectLogRow]:
        g = t.effect_log.c
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(t.effect_log).where(g.workflow_id == workflow_id).order_by(g.id)
            ).mappings()
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
        a = t.artifacts.c
        with self._tx() as conn:
            self._guard(conn, lease, now)
            conn.execute(
                delete(t.artifacts).where(a.workflow_id == lease.workflow_id).where(a.step == step)
            )
            conn.execute(
                insert(t.artifacts).values(
                    workflow_id=lease.workflow_id,
                    step=step,
                    sha256=sha256,
                    uri=uri,
                    media_type=media_type,
                    size=size,
                    created_at=now,
                )
            )

    def artifact(self, workflow_id: str, step: str) -> tuple[str, str, str] | None:
        """(sha256, uri, media_type) of the artifact a step recorded, if any."""
        a = t.artifacts.c
        with self.engine.connect() as conn:
            row = conn.execute(
                select(a.sha256, a.uri, a.media_type)
                .where(a.workflow_id == workflow_id)
                .where(a.step == step)
            ).first()
        return None if row is None else (row.sha256, row.uri, row.media_type)

    def request_approval(
        self,
        lease: Lease,
        now: float,
        gate: str,
        scope: str,
        policy_version: str,
        payload: dict[str, Any],
    ) -> None:
        p = t.approvals.c
        with self._tx() as conn:
            self._guard(conn, lease, now)
            conn.execute(
                delete(t.approvals).where(p.workflow_id == lease.workflow_id).where(p.gate == gate)
            )
            conn.execute(
                insert(t.approvals).values(
                    workflow_id=lease.workflow_id,
                    gate=gate,
                    status="requested",
                    scope=scope,
                    policy_version=policy_version,
                    payload=json.dumps(payload, sort_keys=True),
                    requested_at=now,
                )
            )

    def grant_approval(
        self, workflow_id: str, gate: str, actor: str, expires_at: float
    ) -> ApprovalRecord:
        """A human's answer; only a pending request can be granted."""
        p = t.approvals.c
        with self._tx() as conn:
            moved = conn.execute(
                update(t.approvals)
                .where(p.workflow_id == workflow_id)
                .where(p.gate == gate)
                .where(p.status == "requested")
                .values(status="granted", actor=actor, expires_at=expires_at)
            ).rowcount
        if not moved:
            raise KillpointError(f"no pending approval request {gate!r} on {workflow_id!r}")
        return next(a for a in self.approvals(workflow_id) if a.gate == gate)

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        p = t.approvals.c
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(t.approvals).where(p.workflow_id == workflow_id).order_by(p.gate)
            ).mappings()
            return [
                ApprovalRecord.model_validate({**r, "payload": json.loads(r["payload"])})
                for r in rows
            ]

    @property
    def url_for_humans(self) -> str:
        from sqlalchemy import make_url

        shown = make_url(self.url).render_as_string(hide_password=True)
        return shown if self.schema is None else f"{shown} (schema {self.schema})"


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


def _effect(conn: Connection, workflow_id: str, operation_id: str) -> EffectRecord | None:
    params = {"workflow_id": workflow_id, "operation_id": operation_id}
    row = conn.execute(_EFFECT, params).mappings().first()
    return None if row is None else _effect_record(row)


def _effect_record(row: Any) -> EffectRecord:
    fields = dict(row)
    fields.pop("created_at")
    fields["args"] = json.loads(fields["args"])
    fields["receipt"] = (
        Receipt.model_validate_json(fields["receipt"]) if fields["receipt"] else None
    )
    return EffectRecord.model_validate(fields)


def _log(
    conn: Connection,
    lease: Lease,
    operation_id: str,
    status: EffectStatus,
    now: float,
    *,
    attempt: bool,
    detail: str = "",
) -> None:
    conn.execute(
        _INSERT_LOG,
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


# -- statements built once -------------------------------------------------------------------
# Building a Core statement and computing its cache key costs more than SQLite takes to run
# it; the hot paths reuse these objects, so SQLAlchemy compiles each shape once per engine.

_INSERT_CHECKPOINT = insert(t.checkpoints)
_INSERT_LOG = insert(t.effect_log)
_LATEST_CHECKPOINT = (
    select(t.checkpoints)
    .where(t.checkpoints.c.workflow_id == bindparam("workflow_id"))
    .order_by(t.checkpoints.c.sequence.desc())
    .limit(1)
)
_CHECKPOINTS = (
    select(t.checkpoints)
    .where(t.checkpoints.c.workflow_id == bindparam("workflow_id"))
    .order_by(t.checkpoints.c.sequence)
)
_EFFECTS = (
    select(t.effects)
    .where(t.effects.c.workflow_id == bindparam("workflow_id"))
    .order_by(t.effects.c.created_at, t.effects.c.operation_id)
)
_EFFECT = (
    select(t.effects)
    .where(t.effects.c.workflow_id == bindparam("workflow_id"))
    .where(t.effects.c.operation_id == bindparam("operation_id"))
)
_WORKFLOW = select(t.workflows).where(t.workflows.c.workflow_id == bindparam("workflow_id"))


@cache
def _guarded_update(expect_sequence: bool, keys: tuple[str, ...]) -> Update:
    """The fenced UPDATE of `_guard` for one set of columns, with every value a parameter."""
    w = t.workflows.c
    stmt = (
        update(t.workflows)
        .where(w.workflow_id == bindparam("g_workflow_id"))
        .where(w.fencing_token == bindparam("g_token"))
        .where(w.lease_owner == bindparam("g_owner"))
        .where(w.lease_expires_at > bindparam("g_now"))
    )
    if expect_sequence:
        stmt = stmt.where(w.sequence == bindparam("g_sequence"))
    return stmt.values({k: bindparam(f"v_{k}") for k in keys})


@cache
def _effect_update(receipt: bool, attempt: bool) -> Update:
    """The status move of `mark_effect`, guarded by the statuses it expects."""
    e = t.effects.c
    values: dict[str, Any] = {
        "status": bindparam("v_status"),
        "updated_at": bindparam("v_updated_at"),
        "reason": bindparam("v_reason"),
    }
    if receipt:
        values["receipt"] = bindparam("v_receipt")
    if attempt:
        values["attempts"] = e.attempts + 1
    return (
        update(t.effects)
        .where(e.workflow_id == bindparam("e_workflow_id"))
        .where(e.operation_id == bindparam("e_operation_id"))
        .where(e.status.in_(bindparam("e_expect", expanding=True)))
        .values(values)
    )
