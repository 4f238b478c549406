"""Sealing a checkpoint for the store and opening a stored one, in the only safe order.

Opening checks, before any field is used: the row's tenant is the expected tenant, the tag
matches the bytes (so nothing tampered is deserialized), the schema version is supported;
then older schemas are migrated, and only then is the document validated into a `Checkpoint`:
strictly (a number is never read from a string, nor a count from `true`), closed (no unknown
field), within what the store can hold, and agreeing with its row about whose it is.
"""

from __future__ import annotations

from pydantic import ValidationError

from killpoint.reference.errors import IntegrityError, WrongTenantError
from killpoint.reference.integrity import canonical_json, parse_sealed, seal, verify_seal
from killpoint.reference.migrations import first_error, upgrade
from killpoint.reference.model import SCHEMA_VERSION, Checkpoint, StoredCheckpoint
from killpoint.reference.rows import NewCheckpoint, StepOutput


def seal_checkpoint(
    cp: Checkpoint, key: bytes, outputs: tuple[StepOutput, ...] | list[StepOutput] = ()
) -> NewCheckpoint:
    body = cp.model_dump_json().encode()  # fields in schema order: one byte string per checkpoint
    return NewCheckpoint(
        sequence=cp.sequence,
        run_id=cp.lineage.run_id,
        state=cp.state,
        status=cp.status,
        status_reason=cp.status_reason,
        schema_version=cp.schema_version,
        tenant=cp.tenant,
        body=body,
        tag=seal(body, cp.tenant, key),
        budget=cp.budget,
        outputs=tuple(outputs),
    )


def open_checkpoint(stored: StoredCheckpoint, key: bytes, tenant: str) -> Checkpoint:
    if stored.tenant != tenant:
        raise WrongTenantError(
            f"checkpoint {stored.workflow_id}#{stored.sequence} belongs to tenant "
            f"{stored.tenant!r}, not {tenant!r}"
        )
    verify_seal(stored.body, stored.tenant, stored.tag, key)
    try:  # a current-schema body, parsed and validated in one pass
        cp = Checkpoint.model_validate_json(stored.body, strict=True)
    except ValidationError:  # an older schema to migrate, or a bad one: the slow, careful way
        doc = upgrade(parse_sealed(stored.body))
        try:
            cp = Checkpoint.model_validate_json(canonical_json(doc), strict=True)
        except ValidationError as exc:
            raise IntegrityError(
                f"checkpoint does not match schema v{SCHEMA_VERSION}: {first_error(exc)}"
            ) from exc
    if cp.tenant != tenant or cp.workflow_id != stored.workflow_id:
        raise IntegrityError("checkpoint body disagrees with its row (tenant or workflow id)")
    for field, body, row in (
        ("sequence", cp.sequence, stored.sequence),
        ("state", cp.state, stored.state),
        ("run id", cp.lineage.run_id, stored.run_id),
    ):
        if body != row:
            raise IntegrityError(f"checkpoint body disagrees with its row ({field})")
    return cp
