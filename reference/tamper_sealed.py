"""Tampering with checkpoints that stay validly sealed: what an attacker with write access to
the store (but not the key) can still do, by moving sealed rows where they do not belong.

Rewriting a row's tenant column breaks the seal, so an engine that only checks seals rejects it
by luck. These do not: another tenant's sealed checkpoint of this workflow, another workflow's
sealed checkpoint (its own output rows beside it), and an older sealed checkpoint of this same
workflow, each put in place of the latest. Only an engine that checks what the seal vouches for
(tenant, workflow id, sequence) against the run it resumes refuses them.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, Row, insert, select, update

from killpoint.reference import _schema as t
from killpoint.reference.integrity import canonical_json, seal

OTHER_TENANT = "tenant-from-elsewhere"
OTHER_WORKFLOW_SUFFIX = "-elsewhere"
SEALED_KINDS = ("foreign_tenant", "foreign_workflow", "rollback")


def tamper_sealed(conn: Connection, workflow_id: str, kind: str, key: bytes) -> int | None:
    """Put a validly sealed checkpoint that is not this run's latest in its place; the
    sequence of the row replaced, or None when there is nothing to roll back to."""
    c = t.checkpoints.c
    rows = list(
        conn.execute(
            select(t.checkpoints).where(c.workflow_id == workflow_id).order_by(c.sequence.desc())
        )
    )
    if not rows:
        return None
    latest = rows[0]
    if kind == "rollback":
        if len(rows) < 2:
            return None
        older = rows[1]  # the one before: sealed for this tenant and workflow, only older
        _put(conn, latest, older.body, older.tag, older.tenant)
    elif kind == "foreign_tenant":
        doc = {**json.loads(bytes(latest.body)), "tenant": OTHER_TENANT}
        body = canonical_json(doc)
        _put(conn, latest, body, seal(body, OTHER_TENANT, key), OTHER_TENANT)
    else:
        other = workflow_id + OTHER_WORKFLOW_SUFFIX
        body, tag = _clone(conn, workflow_id, other, key, rows)
        _put(conn, latest, body, tag, latest.tenant)
    return int(latest.sequence)


def _put(conn: Connection, row: Row[Any], body: bytes, tag: str, tenant: str) -> None:
    c = t.checkpoints.c
    conn.execute(
        update(t.checkpoints)
        .where(c.workflow_id == row.workflow_id)
        .where(c.sequence == row.sequence)
        .values(body=body, tag=tag, tenant=tenant)
    )


def _clone(
    conn: Connection, workflow_id: str, other: str, key: bytes, rows: list[Row[Any]]
) -> tuple[bytes, str]:
    """Another workflow of this tenant, as far as this one got: its own workflow row, sealed
    checkpoints and output rows (copies under another id). Its latest checkpoint's bytes and tag.
    """
    w, o = t.workflows.c, t.outputs.c
    if conn.execute(select(w.workflow_id).where(w.workflow_id == other)).first() is None:
        wf = conn.execute(select(t.workflows).where(w.workflow_id == workflow_id)).one()
        conn.execute(insert(t.workflows).values({**wf._asdict(), "workflow_id": other}))
        outs = conn.execute(select(t.outputs).where(o.workflow_id == workflow_id)).all()
        for out in outs:
            conn.execute(insert(t.outputs).values({**out._asdict(), "workflow_id": other}))
        for row in reversed(rows):
            body, tag = _resealed(row, other, key)
            values = {**row._asdict(), "workflow_id": other, "body": body, "tag": tag}
            conn.execute(insert(t.checkpoints).values(values))
    c = t.checkpoints.c
    latest = conn.execute(
        select(c.body, c.tag).where(c.workflow_id == other).order_by(c.sequence.desc()).limit(1)
    ).one()
    return bytes(latest.body), str(latest.tag)


def _resealed(row: Row[Any], workflow_id: str, key: bytes) -> tuple[bytes, str]:
    body = canonical_json({**json.loads(bytes(row.body)), "workflow_id": workflow_id})
    return body, seal(body, row.tenant, key)
