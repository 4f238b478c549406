"""Altering a stored checkpoint the way an attacker, a bad migration or a bit flip would.

Used by schedules to prove the loader rejects what it must: a changed byte, a row moved to
another tenant, a validly sealed checkpoint of a schema this engine does not support.
"""

from __future__ import annotations

import json

from sqlalchemy import select, update

from harness import _schema as t
from harness.errors import KillpointError
from harness.integrity import SecretRef, canonical_json, seal
from harness.store import Store

OTHER_TENANT = "tenant-from-elsewhere"


def tamper_latest(store: Store, workflow_id: str, kind: str, secret: SecretRef) -> int:
    """Alter the latest checkpoint of a workflow in place; returns its sequence."""
    c = t.checkpoints.c
    with store.engine.begin() as conn:
        row = conn.execute(
            select(c.sequence, c.body, c.tenant)
            .where(c.workflow_id == workflow_id)
            .order_by(c.sequence.desc())
            .limit(1)
        ).first()
        if row is None:
            raise KillpointError(f"no checkpoint of {workflow_id!r} to tamper with")
        values: dict[str, object]
        if kind == "flip_byte":
            body = bytearray(row.body)
            at = body.find(b'"state":"') + len(b'"state":"')
            body[at] ^= 0x01
            values = {"body": bytes(body)}
        elif kind == "wrong_tenant":
            values = {"tenant": OTHER_TENANT}
        elif kind == "unsupported_schema":
            doc = json.loads(row.body)
            doc["schema_version"] = 99
            body2 = canonical_json(doc)
            values = {
                "body": body2,
                "schema_version": 99,
                "tag": seal(body2, row.tenant, secret.resolve()),
            }
        else:
            raise KillpointError(f"unknown tamper kind {kind!r}")
        conn.execute(
            update(t.checkpoints)
            .where(c.workflow_id == workflow_id)
            .where(c.sequence == row.sequence)
            .values(**values)
        )
        return int(row.sequence)
