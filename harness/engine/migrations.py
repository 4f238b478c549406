"""Registered migrations from older checkpoint schemas to the current one.

A migration may rename, reshape and derive; it may never invent a value that guards safety.
Where an old checkpoint lacks its tenant, its budget limits or its approval's expiry, the
checkpoint is quarantined instead: the seed's rule is "no silent defaulting of missing security
fields". Additive, non-security fields (versions that were not recorded) get an explicit
`unrecorded` marker, which the compatibility policy then treats as a version change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from killpoint.harness.engine.errors import IntegrityError, QuarantinedError
from killpoint.harness.engine.integrity import input_hash
from killpoint.harness.engine.model import SCHEMA_VERSION

UNRECORDED = "unrecorded"

Doc = dict[str, Any]
Migration = Callable[[Doc], Doc]

MIGRATIONS: dict[int, Migration] = {}


def migration(from_version: int) -> Callable[[Migration], Migration]:
    def register(fn: Migration) -> Migration:
        MIGRATIONS[from_version] = fn
        return fn

    return register


def _require(doc: Doc, field: str, why: str) -> Any:
    value = doc.get(field)
    if value is None:
        raise QuarantinedError(
            f"schema v{doc.get('schema_version')} checkpoint has no {field!r}; "
            f"migrating would have to invent {why}"
        )
    return value


@migration(1)
def v1_to_v2(doc: Doc) -> Doc:
    """v1 stored limits and spend separately, one optional approval, and `owner_tenant`."""
    tenant = _require(doc, "owner_tenant", "the tenant")
    limits = _require(doc, "limits", "the budget")
    spent = doc.get("spent") or {}
    approvals = []
    if doc.get("approved_by") is not None:
        approvals.append(
            {
                "gate": _require(doc, "approval_gate", "the approval gate"),
                "actor": doc["approved_by"],
                "scope": _require(doc, "approval_scope", "the approval scope"),
                "policy_version": _require(doc, "approval_policy", "the approval policy"),
                "expires_at": _require(doc, "approval_expires_at", "the approval's expiry"),
            }
        )
    return {
        "schema_version": 2,
        "workflow_id": doc["workflow_id"],
        "workflow_name": doc["workflow_name"],
        "tenant": tenant,
        "lineage": {"run_id": doc["run_id"], "parent_run_id": None, "decision": "start"},
        "sequence": doc["sequence"],
        "state": doc["state"],
        "status": doc["status"],
        "input": doc["input"],
        "plan_version": doc["plan_version"],
        "prompt_version": doc["prompt_version"],
        "artifacts": doc.get("artifacts", []),
        "effects": [
            {
                "operation_id": e["operation_id"],
                "intent": e["intent"],
                "idempotency_key": e["key"],
                "status": e["status"],
                "receipt_id": e.get("receipt_id"),
            }
            for e in doc.get("effects", [])
        ],
        "approvals": approvals,
        "budget": {
            "attempts_left": limits["attempts"] - spent.get("attempts", 0),
            "steps_left": limits["steps"] - spent.get("steps", 0),
            "cost_left": limits["cost"] - spent.get("cost", 0),
            "time_left_ms": limits["time_ms"] - spent.get("time_ms", 0),
        },
        "next_actions": doc.get("next_actions", []),
        "outputs": doc.get("outputs", {}),
        "created_at": doc["created_at"],
    }


@migration(2)
def v2_to_v3(doc: Doc) -> Doc:
    """v3 records the model contract and tool schema, the input hash and pending work."""
    for field in ("tenant", "budget", "approvals"):
        _require(doc, field, f"the {field}")
    out = {k: v for k, v in doc.items() if k not in ("plan_version", "prompt_version")}
    out["schema_version"] = 3
    out["versions"] = {
        "plan": doc["plan_version"],
        "prompt": doc["prompt_version"],
        "model_contract": UNRECORDED,
        "tool_schema": UNRECORDED,
    }
    out["input_hash"] = input_hash(doc["input"])
    out["pending"] = (
        [{"kind": "approval", "ref": doc["state"], "detail": "migrated from v2"}]
        if doc["status"] == "waiting_approval"
        else []
    )
    return out


@migration(3)
def v3_to_v4(doc: Doc) -> Doc:
    """v4 keeps step outputs in rows of their own; a v3 checkpoint carries its own inline, so
    its run's output rows begin after it."""
    out = dict(doc)
    out["schema_version"] = 4
    out["outputs_ref"] = {"since": doc["sequence"], "count": 0, "digest": ""}
    return out


def upgrade(doc: Doc) -> Doc:
    """Run the chain of registered migrations up to the current schema version."""
    version = doc.get("schema_version")
    if not isinstance(version, int):
        raise IntegrityError("checkpoint has no integer schema_version")
    if version > SCHEMA_VERSION:
        raise IntegrityError(
            f"checkpoint schema v{version} is newer than this engine (v{SCHEMA_VERSION})"
        )
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise IntegrityError(f"no migration registered from checkpoint schema v{version}")
        try:  # a sealed old body missing a field or with one of the wrong type
            doc = step(doc)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise QuarantinedError(
                f"schema v{version} checkpoint cannot be migrated: {type(exc).__name__} {exc}"
            ) from exc
        version = doc["schema_version"]
    return doc
