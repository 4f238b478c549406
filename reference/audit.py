"""The audit of operator controls: who acted, when, with which control, why, from which state.

Seed 000 lists "operator actions" among what observability keeps, and an audit log in the
baseline. A control's audit row is written by the checkpoint log of the control's own commit
(`AuditedLog`), in the transaction of that commit: a control that acted is audited, and an
audit row never describes a commit that did not happen. The same transaction starts the run's
delivery count over (`deadletter`): a person handed the run back.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from sqlalchemy import bindparam, insert, select

from killpoint.contract.records import RunStatus
from killpoint.reference import _schema as t
from killpoint.reference._sql import Tx
from killpoint.reference.checkpoint import NewCheckpoint
from killpoint.reference.deadletter import forget_deliveries
from killpoint.reference.lease import Lease
from killpoint.reference.store import CheckpointLog, Store

c = t.controls.c
FIELDS = (
    "workflow_id",
    "tenant",
    "control",
    "actor",
    "reason",
    "at",
    "from_status",
    "from_state",
    "from_sequence",
    "to_status",
    "to_sequence",
    "fencing_token",
    "detail",
)
INSERT_AUDIT = insert(t.controls).values({name: bindparam(name) for name in FIELDS})
AUDIT = (
    select(*(c[name] for name in FIELDS)).where(c.workflow_id == bindparam("workflow_id"))
).order_by(c.id)
STATEMENTS = (INSERT_AUDIT, AUDIT)  # what a warmed store compiles ahead (the real tier's prepare)


class AuditRecord(BaseModel):
    """One control that acted, as the store keeps it."""

    model_config = ConfigDict(frozen=True)

    workflow_id: str
    tenant: str
    control: str
    actor: str
    reason: str
    at: float
    from_status: RunStatus
    from_state: str
    from_sequence: int
    to_status: RunStatus
    to_sequence: int
    fencing_token: int
    detail: str = ""


class AuditedLog(CheckpointLog):
    """The checkpoint log of one control's commit: the checkpoint, then its audit row."""

    def __init__(self, inner: CheckpointLog, entry: AuditRecord) -> None:
        self.inner = inner
        self.entry = entry

    def append(self, tx: Tx, lease: Lease, now: float, cp: NewCheckpoint) -> None:
        self.inner.append(tx, lease, now, cp)
        row = self.entry.model_dump(mode="json")
        row.update(to_status=cp.status.value, to_sequence=cp.sequence, fencing_token=lease.token)
        tx.write(INSERT_AUDIT, row)
        forget_deliveries(tx, lease.workflow_id)

    def erase(self, tx: Tx, workflow_id: str, sequence: int) -> None:
        self.inner.erase(tx, workflow_id, sequence)


def audit_trail(store: Store, workflow_id: str) -> list[AuditRecord]:
    """Every control that acted on the workflow, oldest first."""
    rows = store.db.reading().execute(AUDIT, {"workflow_id": workflow_id}).rows
    return [AuditRecord.model_validate(row) for row in rows]
