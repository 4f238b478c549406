"""Registered migrations from older checkpoint schemas to the next, up to the current one.

`checkpoint.upgrade` runs the chain; this module holds its links, one per older schema.

A migration may rename, reshape and derive; it may never invent a value that guards safety.
Where an old checkpoint lacks its tenant, its budget limits or its approval's expiry, the
checkpoint is quarantined instead: the seed's rule is "no silent defaulting of missing security
fields". Additive, non-security fields (versions that were not recorded) get an explicit
`unrecorded` marker, which the compatibility policy then treats as a version change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from killpoint.reference._schema import INT32, INT64
from killpoint.reference.errors import QuarantinedError
from killpoint.reference.integrity import canonical_json, input_hash

UNRECORDED = "unrecorded"

Doc = dict[str, Any]
Migration = Callable[[Doc], Doc]

MIGRATIONS: dict[int, Migration] = {}


def migration(from_version: int) -> Callable[[Migration], Migration]:
    def register(fn: Migration) -> Migration:
        MIGRATIONS[from_version] = fn
        return fn

    return register


def _require(value: Any, version: int, field: str, why: str) -> Any:
    if value is None:
        raise QuarantinedError(
            f"schema v{version} checkpoint has no {field!r}; migrating would have to invent {why}"
        )
    return value


# -- schema v1, as its engine wrote it: v1 is reshaped, not copied, so it is read by its own
# closed, strict schema first (an unknown or mistyped field would otherwise be dropped or
# coerced on the way). Later schemas are copied forward and the current one checks them.


class _V1(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)


Count = Annotated[int, Field(ge=0, le=INT32)]
Millis = Annotated[int, Field(ge=0, le=INT64)]


class V1Limits(_V1):
    attempts: Count
    steps: Count
    cost: Count
    time_ms: Millis


class V1Spent(_V1):
    attempts: Count = 0
    steps: Count = 0
    cost: Count = 0
    time_ms: Millis = 0


class V1Effect(_V1):
    operation_id: str
    intent: str
    key: str
    status: str
    receipt_id: str | None = None


class V1Checkpoint(_V1):
    """Its security fields are optional here, so that a missing one is quarantined with its
    reason (never defaulted), not reported as a schema error."""

    schema_version: Literal[1]
    workflow_id: str
    workflow_name: str
    owner_tenant: str | None = None
    run_id: str
    sequence: int
    state: str
    status: str
    input: dict[str, JsonValue]
    plan_version: str
    prompt_version: str
    limits: V1Limits | None = None
    spent: V1Spent = V1Spent()
    artifacts: list[dict[str, JsonValue]] = []
    effects: list[V1Effect] = []
    approved_by: str | None = None
    approval_gate: str | None = None
    approval_scope: str | None = None
    approval_policy: str | None = None
    approval_expires_at: float | None = None
    next_actions: list[str] = []
    outputs: dict[str, JsonValue] = {}
    created_at: float


@migration(1)
def v1_to_v2(doc: Doc) -> Doc:
    """v1 stored limits and spend separately, one optional approval, and `owner_tenant`."""
    old = V1Checkpoint.model_validate_json(canonical_json(doc))
    tenant = _require(old.owner_tenant, 1, "owner_tenant", "the tenant")
    limits: V1Limits = _require(old.limits, 1, "limits", "the budget")
    spent = old.spent
    approvals = []
    if old.approved_by is not None:
        approvals.append(
            {
                "gate": _require(old.approval_gate, 1, "approval_gate", "the approval gate"),
                "actor": old.approved_by,
                "scope": _require(old.approval_scope, 1, "approval_scope", "the approval scope"),
                "policy_version": _require(
                    old.approval_policy, 1, "approval_policy", "the approval policy"
                ),
                "expires_at": _require(
                    old.approval_expires_at, 1, "approval_expires_at", "the approval's expiry"
                ),
            }
        )
    return {
        "schema_version": 2,
        "workflow_id": old.workflow_id,
        "workflow_name": old.workflow_name,
        "tenant": tenant,
        "lineage": {"run_id": old.run_id, "parent_run_id": None, "decision": "start"},
        "sequence": old.sequence,
        "state": old.state,
        "status": old.status,
        "input": old.input,
        "plan_version": old.plan_version,
        "prompt_version": old.prompt_version,
        "artifacts": old.artifacts,
        "effects": [
            {
                "operation_id": e.operation_id,
                "intent": e.intent,
                "idempotency_key": e.key,
                "status": e.status,
                "receipt_id": e.receipt_id,
            }
            for e in old.effects
        ],
        "approvals": approvals,
        "budget": {
            "attempts_left": limits.attempts - spent.attempts,
            "steps_left": limits.steps - spent.steps,
            "cost_left": limits.cost - spent.cost,
            "time_left_ms": limits.time_ms - spent.time_ms,
        },
        "next_actions": old.next_actions,
        "outputs": old.outputs,
        "created_at": old.created_at,
    }


@migration(2)
def v2_to_v3(doc: Doc) -> Doc:
    """v3 records the model contract and tool schema, the input hash and pending work."""
    for field in ("tenant", "budget", "approvals"):
        _require(doc.get(field), 2, field, f"the {field}")
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
