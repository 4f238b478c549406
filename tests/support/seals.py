"""A sealed checkpoint broken by one byte."""

from __future__ import annotations

from killpoint.reference.store import Store
from tests.support.flows import alter_rows


def flip_one_byte(store: Store, workflow_id: str, sequence: int, at: int | None = None) -> None:
    """What an attacker or a bad disk does: change one byte of the stored body, in SQL."""
    stored = next(c for c in store.checkpoints(workflow_id) if c.sequence == sequence)
    body = bytearray(stored.body)
    i = at if at is not None else body.index(b'"state":"') + len('"state":"')
    body[i] ^= 0x01
    alter_rows(
        store, "checkpoints", {"body": bytes(body)}, workflow_id=workflow_id, sequence=sequence
    )
