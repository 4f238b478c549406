"""The store's records and how each becomes a table row and back: one mapper per table.

Pure functions over plain values: the store runs the statements, the lease's fence guards
them, and this module alone knows which column holds which field. A checkpoint row is built by
one mapper whether the workflow's first checkpoint or a later one is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from killpoint.contract.records import (
    ApprovalRecord,
    EffectRecord,
    EffectStatus,
    Receipt,
    RunStatus,
)
from killpoint.reference.checkpoint import (
    Checkpoint,
    Frozen,
    NewCheckpoint,
    StepOutput,
    StoredCheckpoint,
)
from killpoint.reference.errors import IntegrityError

if TYPE_CHECKING:  # a type only: the lease's fence maps its moves with this module
    from killpoint.reference.lease import Lease

Row = dict[str, Any]


class WorkflowRecord(Frozen):
    """A workflow's row: where it stands, who holds its lease, and its durable budget."""

    workflow_id: str
    workflow_name: str
    tenant: str
    status: RunStatus
    status_reason: str
    state: str
    sequence: int
    fencing_token: int
    lease_owner: str | None
    lease_expires_at: float | None
    attempts_left: int
    steps_left: int
    cost_left: int
    deadline: float
    created_at: float
    updated_at: float

    @classmethod
    def first(cls, cp: Checkpoint, deadline: float) -> WorkflowRecord:
        """The row of a workflow whose checkpoint 1 is `cp`: free, at its first state."""
        return cls(
            workflow_id=cp.workflow_id,
            workflow_name=cp.workflow_name,
            tenant=cp.tenant,
            status=cp.status,
            status_reason="",
            state=cp.state,
            sequence=cp.sequence,
            fencing_token=0,
            lease_owner=None,
            lease_expires_at=None,
            attempts_left=cp.budget.attempts_left,
            steps_left=cp.budget.steps_left,
            cost_left=cp.budget.cost_left,
            deadline=deadline,
            created_at=cp.created_at,
            updated_at=cp.created_at,
        )


@dataclass(frozen=True)
class EffectLogRow:
    workflow_id: str
    operation_id: str
    status: EffectStatus
    fencing_token: int
    attempt: bool
    at: float
    detail: str


# -- workflows ----------------------------------------------------------------------------------


def workflow_row(record: WorkflowRecord) -> Row:
    return {**record.model_dump(mode="json"), "compacted_below": 0}


def workflow_record(row: Row) -> WorkflowRecord:
    row.pop("compacted_below")
    return WorkflowRecord.model_validate(row)


def workflow_position(cp: NewCheckpoint) -> Row:
    """The columns of the workflow row that a committed checkpoint moves."""
    return {
        "sequence": cp.sequence,
        "state": cp.state,
        "status": cp.status.value,
        "status_reason": cp.status_reason,
        "attempts_left": cp.budget.attempts_left,
        "steps_left": cp.budget.steps_left,
        "cost_left": cp.budget.cost_left,
    }


# -- checkpoints and outputs --------------------------------------------------------------------


def checkpoint_row(workflow_id: str, cp: NewCheckpoint, token: int, created_at: float) -> Row:
    return {
        "workflow_id": workflow_id,
        "sequence": cp.sequence,
        "run_id": cp.run_id,
        "state": cp.state,
        "schema_version": cp.schema_version,
        "tenant": cp.tenant,
        "body": cp.body,
        "tag": cp.tag,
        "fencing_token": token,
        "created_at": created_at,
    }


def stored_checkpoint(row: Row) -> StoredCheckpoint:
    body = row["body"]
    if not isinstance(body, (bytes, bytearray, memoryview)):  # an edited column: text, a number
        raise IntegrityError(
            f"checkpoint {row.get('workflow_id')}#{row.get('sequence')} body is stored as "
            f"{type(body).__name__}, not bytes"
        )
    row["body"] = bytes(body)  # a driver may hand back a memoryview
    try:
        return StoredCheckpoint.model_validate(row)
    except ValidationError as exc:  # another edited column: a text sequence, a numeric tenant
        where = ".".join(str(p) for p in exc.errors()[0]["loc"])
        raise IntegrityError(
            f"checkpoint {row.get('workflow_id')}#{row.get('sequence')} row has a bad {where}: "
            f"{exc.errors()[0]['msg']}"
        ) from exc


def step_output(row: Row) -> StepOutput:
    """An output row as stored; a column of another type (an edited row) is an IntegrityError."""
    out = StepOutput(**row)
    if not (
        isinstance(out.sequence, int)
        and isinstance(out.step, str)
        and isinstance(out.value, str)
        and isinstance(out.sha256, str)
    ):
        raise IntegrityError(f"output row of {out.step!r} holds a column of the wrong type")
    return out


def output_row(workflow_id: str, out: StepOutput) -> Row:
    return {
        "workflow_id": workflow_id,
        "sequence": out.sequence,
        "step": out.step,
        "value": out.value,
        "sha256": out.sha256,
    }


# -- the effect ledger and its log --------------------------------------------------------------


def effect_row(record: EffectRecord, now: float) -> Row:
    row = record.model_dump(mode="json", exclude={"receipt"})
    row["args"] = json.dumps(record.args, sort_keys=True)
    row["receipt"] = record.receipt.model_dump_json() if record.receipt else None
    row["created_at"] = now
    return row


def effect_record(row: Row) -> EffectRecord:
    fields = dict(row)
    fields.pop("created_at")
    fields["args"] = json.loads(fields["args"])
    fields["receipt"] = (
        Receipt.model_validate_json(fields["receipt"]) if fields["receipt"] else None
    )
    return EffectRecord.model_validate(fields)


def log_row(
    lease: Lease, operation_id: str, status: EffectStatus, now: float, attempt: bool, detail: str
) -> Row:
    return {
        "workflow_id": lease.workflow_id,
        "operation_id": operation_id,
        "status": status.value,
        "fencing_token": lease.token,
        "attempt": attempt,
        "at": now,
        "detail": detail,
    }


def log_entry(row: Row) -> EffectLogRow:
    return EffectLogRow(
        workflow_id=row["workflow_id"],
        operation_id=row["operation_id"],
        status=EffectStatus(row["status"]),
        fencing_token=row["fencing_token"],
        attempt=bool(row["attempt"]),
        at=row["at"],
        detail=row["detail"],
    )


# -- artifacts and approvals --------------------------------------------------------------------


def artifact_row(
    workflow_id: str, step: str, sha256: str, uri: str, media_type: str, size: int, now: float
) -> Row:
    return {
        "workflow_id": workflow_id,
        "step": step,
        "sha256": sha256,
        "uri": uri,
        "media_type": media_type,
        "size": size,
        "created_at": now,
    }


def approval_request_row(
    workflow_id: str,
    gate: str,
    scope: str,
    policy_version: str,
    payload: dict[str, Any],
    now: float,
) -> Row:
    return {
        "workflow_id": workflow_id,
        "gate": gate,
        "status": "requested",
        "scope": scope,
        "policy_version": policy_version,
        "payload": json.dumps(payload, sort_keys=True),
        "requested_at": now,
    }


def approval_record(row: Row) -> ApprovalRecord:
    return ApprovalRecord.model_validate({**row, "payload": json.loads(row["payload"])})
