"""Altering what a worker left behind, the way an attacker, an old deploy or a bad disk would.

Used by schedules to prove the loader and the artifact reads reject what they must: a changed
byte, a row moved to another tenant, a validly sealed checkpoint of a schema this engine does
not support, a checkpoint written by an older engine (one that migrates cleanly, one that lacks
its tenant, its budget limits or its approval's expiry: one security field at a time, so each
migration path that must refuse runs), a step output altered (or forged) in its row; validly
sealed checkpoints moved where they do not belong (`tamper_sealed`), damaged artifact files
(`tamper_files`) and a ledger row rolled back behind its log. `stage` is the one entry: it
stages a kind, or declines one it does not know or that has nothing to alter here (None).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, insert, select, update

from killpoint.contract.errors import KillpointError
from killpoint.reference import _schema as t
from killpoint.reference.checkpoint import SCHEMA_VERSION, upgrade
from killpoint.reference.errors import IntegrityError
from killpoint.reference.integrity import SecretRef, canonical_json, seal, sha256_hex
from killpoint.reference.store import Store
from killpoint.reference.tamper_files import ARTIFACT_KINDS, tamper_artifact
from killpoint.reference.tamper_sealed import OTHER_TENANT, SEALED_KINDS, tamper_sealed

FORGED_STEP = "forged"
LEGACY_KINDS = (
    "legacy_v2",
    "legacy_unsafe",
    "legacy_no_limits",
    "legacy_no_approval_expiry",
    "legacy_v1",
)
CHECKPOINT_KINDS = ("flip_byte", "wrong_tenant", "unsupported_schema", "output_altered")
LEDGER_KINDS = ("ledger_rolled_back",)
KINDS = CHECKPOINT_KINDS + LEGACY_KINDS + SEALED_KINDS + ARTIFACT_KINDS + LEDGER_KINDS
SETTLED = ("committed", "verified", "compensated")
# v1's names for the budget's fields: (its limit and spend, the budget left)
V1_FIELDS = (
    ("attempts", "attempts_left"),
    ("steps", "steps_left"),
    ("cost", "cost_left"),
    ("time_ms", "time_left_ms"),
)


class Declined(Exception):
    """This tampering has nothing to alter here (no approval to strip of its expiry)."""


def stage(store: Store, root: Path, workflow_id: str, kind: str, secret: SecretRef) -> int | None:
    """Stage one kind of tampering on a stopped workflow: the sequence of the checkpoint it
    altered (the latest, for an artifact), or None if it is not a kind of ours or there is
    nothing here to alter."""
    if kind not in KINDS:
        return None
    if kind in ARTIFACT_KINDS:
        if tamper_artifact(store, root, workflow_id, kind) == 0:
            return None
        return store.workflow(workflow_id).sequence
    if kind in SEALED_KINDS:
        with store.engine.begin() as conn:
            return tamper_sealed(conn, workflow_id, kind, secret.resolve())
    if kind in LEDGER_KINDS:
        return (
            store.workflow(workflow_id).sequence if _roll_back_ledger(store, workflow_id) else None
        )
    try:
        return tamper_latest(store, workflow_id, kind, secret)
    except Declined:
        return None


def _roll_back_ledger(store: Store, workflow_id: str) -> bool:
    """Set the latest settled ledger row back to `prepared`, receipt gone, as a restore of the
    ledger from a backup taken before the call; its append-only log is left as it was."""
    e = t.effects.c
    with store.engine.begin() as conn:
        row = conn.execute(
            select(e.operation_id)
            .where(e.workflow_id == workflow_id)
            .where(e.status.in_(SETTLED))
            .order_by(e.updated_at.desc())
            .limit(1)
        ).first()
        if row is None:
            return False
        conn.execute(
            update(t.effects)
            .where(e.workflow_id == workflow_id)
            .where(e.operation_id == row.operation_id)
            .values(status="prepared", receipt=None, reason="")
        )
    return True


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
        if kind == "output_altered":
            _alter_output(conn, workflow_id, row.sequence, row.body)
            return int(row.sequence)
        inline, limits = _inline(conn, workflow_id), _limits(conn, workflow_id)
        values = _altered(kind, row.body, row.tenant, secret, inline, limits)
        if values:
            conn.execute(
                update(t.checkpoints)
                .where(c.workflow_id == workflow_id)
                .where(c.sequence == row.sequence)
                .values(**values)
            )
        return int(row.sequence)


def _alter_output(conn: Connection, workflow_id: str, sequence: int, body: bytes) -> None:
    """Rewrite the latest output row the checkpoint pins (hash and all, as an attacker would,
    and keeping its shape, so a step would still take it), or, where it pins none, forge one
    after it."""
    o = t.outputs.c
    try:
        since = int(json.loads(body)["outputs_ref"]["since"])
    except (ValueError, KeyError, TypeError):
        since = sequence
    latest = conn.execute(
        select(o.sequence, o.step, o.value)
        .where(o.workflow_id == workflow_id)
        .where(o.sequence > since)
        .order_by(o.sequence.desc())
        .limit(1)
    ).first()
    forged = canonical_json(_poisoned(json.loads(latest.value) if latest else None)).decode()
    values = {"value": forged, "sha256": sha256_hex(forged.encode())}
    if latest is None:
        row = {"workflow_id": workflow_id, "sequence": sequence + 1, "step": FORGED_STEP}
        conn.execute(insert(t.outputs).values(**row, **values))
        return
    conn.execute(
        update(t.outputs)
        .where(o.workflow_id == workflow_id)
        .where(o.sequence == latest.sequence)
        .where(o.step == latest.step)
        .values(**values)
    )


def _poisoned(value: Any) -> Any:
    """The same kind of value, saying something else."""
    if isinstance(value, dict) and value:
        key = sorted(value)[0]
        return {**value, key: _poisoned(value[key])}
    if isinstance(value, list) and value:
        return [_poisoned(value[0]), *value[1:]]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + " (altered)"
    return "forged by killpoint"


def _inline(conn: Connection, workflow_id: str) -> dict[str, Any]:
    """Every output row, as an engine older than schema v4 kept them: inside the checkpoint."""
    o = t.outputs.c
    rows = conn.execute(
        select(o.step, o.value).where(o.workflow_id == workflow_id).order_by(o.sequence)
    )
    return {r.step: json.loads(r.value) for r in rows}


def _limits(conn: Connection, workflow_id: str) -> dict[str, Any] | None:
    """The run's limits, as its first checkpoint's budget shows them (nothing spent yet)."""
    c = t.checkpoints.c
    body = conn.execute(
        select(c.body).where(c.workflow_id == workflow_id).order_by(c.sequence).limit(1)
    ).scalar()
    try:
        budget = json.loads(body)["budget"] if body is not None else None
    except (ValueError, KeyError, TypeError):
        return None
    return budget if isinstance(budget, dict) else None


def _altered(
    kind: str,
    body: bytes,
    tenant: str,
    secret: SecretRef,
    inline: dict[str, Any],
    limits: dict[str, Any] | None = None,
) -> dict[str, Any]:
    if kind == "flip_byte":
        flipped = bytearray(body)
        at = flipped.find(b'"input_hash":"sha256:') + len(b'"input_hash":"sha256:')
        flipped[at] ^= 0x01
        return {"body": bytes(flipped)}
    if kind == "wrong_tenant":
        return {"tenant": OTHER_TENANT}
    doc = json.loads(body)
    if kind in LEGACY_KINDS and doc.get("schema_version") != SCHEMA_VERSION:
        try:  # altered before: rewrite it from what it migrates to, if it still does
            doc = upgrade(doc)
        except IntegrityError:
            return {}  # already unusable; a second alteration changes nothing
    if kind in LEGACY_KINDS:
        doc["outputs"] = {**inline, **doc["outputs"]}
    if kind == "unsupported_schema":
        doc["schema_version"] = 99
    elif kind == "legacy_v2":
        doc = as_v2(doc)
    elif kind == "legacy_unsafe":
        doc = as_v1(doc, tenant=None)
    elif kind == "legacy_no_limits":
        doc = as_v1(doc, tenant=tenant)
        del doc["limits"]
    elif kind == "legacy_v1":
        doc = as_v1(doc, tenant=tenant, approval=True, limits=limits)
    elif kind == "legacy_no_approval_expiry":
        if not doc["approvals"]:
            raise Declined(kind)
        doc = as_v1(doc, tenant=tenant, approval=True)
        del doc["approval_expires_at"]
    else:
        raise KillpointError(f"unknown tamper kind {kind!r}")
    resealed = canonical_json(doc)
    return {
        "body": resealed,
        "schema_version": doc["schema_version"],
        "tag": seal(resealed, tenant, secret.resolve()),
    }


def as_v2(doc: dict[str, Any]) -> dict[str, Any]:
    """The same checkpoint as the v2 engine wrote it: no model contract, tool schema, pending."""
    old = {
        k: v
        for k, v in doc.items()
        if k
        not in ("versions", "input_hash", "pending", "status_reason", "secret_refs", "outputs_ref")
    }
    old["schema_version"] = 2
    old["plan_version"] = doc["versions"]["plan"]
    old["prompt_version"] = doc["versions"]["prompt"]
    old["approvals"] = [
        {k: a[k] for k in ("gate", "actor", "scope", "policy_version", "expires_at")}
        for a in doc["approvals"]
    ]
    return old


def as_v1(
    doc: dict[str, Any],
    tenant: str | None,
    approval: bool = False,
    limits: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The same checkpoint as the v1 engine wrote it; `tenant=None` is a pre-tenancy row. v1
    held one approval, as flat fields: kept (the latest) only when `approval` is asked for.
    v1 kept the run's limits and what it had spent apart: with `limits` (the first
    checkpoint's budget) it is written so, partly spent; without, as limits equal to what is
    left and nothing spent."""
    budget = doc["budget"]
    first = limits or budget
    grant = doc["approvals"][-1] if approval and doc["approvals"] else None
    flat = (
        {
            "approved_by": grant["actor"],
            "approval_gate": grant["gate"],
            "approval_scope": grant["scope"],
            "approval_policy": grant["policy_version"],
            "approval_expires_at": grant["expires_at"],
        }
        if grant
        else {"approved_by": None}
    )
    return {
        **flat,
        "schema_version": 1,
        "workflow_id": doc["workflow_id"],
        "workflow_name": doc["workflow_name"],
        "owner_tenant": tenant,
        "run_id": doc["lineage"]["run_id"],
        "sequence": doc["sequence"],
        "state": doc["state"],
        "status": doc["status"],
        "input": doc["input"],
        "plan_version": doc["versions"]["plan"],
        "prompt_version": doc["versions"]["prompt"],
        "artifacts": doc["artifacts"],
        "effects": [
            {
                "operation_id": e["operation_id"],
                "intent": e["intent"],
                "key": e["idempotency_key"],
                "status": e["status"],
                "receipt_id": e["receipt_id"],
            }
            for e in doc["effects"]
        ],
        "limits": {name: first[field] for name, field in V1_FIELDS},
        "spent": {name: first[field] - budget[field] for name, field in V1_FIELDS if limits},
        "next_actions": doc["next_actions"],
        "outputs": doc["outputs"],
        "created_at": doc["created_at"],
    }
