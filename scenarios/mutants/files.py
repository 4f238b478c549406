"""Mutants of file and delete effects (seed 001: "For file writes, use content hashes and
atomic rename. For deletes, verify the resource state before and after").

Each makes its mistake between the ledger and the object store, as an engine whose file
helper was written the way a local disk invites: the file opened at its final name and written
in pieces, and a delete by name. Written from the seed's words, not from the checker that
catches them.
"""

from __future__ import annotations

import base64

from killpoint import fake_services as fs
from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.errors import OutcomeUnknown
from killpoint.contract.records import EffectIntent, Receipt
from killpoint.reference.ledger import EffectExecutor, Session
from killpoint.scenarios.mutants.wrapped import Wrapped


def _client(adapter: EffectAdapter) -> fs.FilesClient | None:
    client = getattr(adapter, "client", None)
    return client if isinstance(client, fs.FilesClient) else None


class _WrittenInPieces(Wrapped):
    """A file write that opens the file at its final name and writes it in two pieces (its
    first half, then the rest appended), the way `open(path, "w")` and two buffered writes
    do on a disk."""

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        client = _client(self.adapter)
        if client is None or intent.operation != "put":
            return self.adapter.send(intent, key)
        name = str(intent.args["key"])
        data = base64.b64decode(str(intent.args["content_b64"]))
        half = len(data) // 2
        try:
            client.put(name, data[:half], idempotency_key=key)
            client.append(name, half, data[half:], idempotency_key=key)
        except fs.OutcomeUnknown as exc:
            raise OutcomeUnknown(f"files put: {exc}") from exc
        detail = {k: v for k, v in intent.args.items() if k != "content_b64"}
        return Receipt(resource_id=name, detail=detail)


class NonAtomicFileWrite(EffectExecutor):
    """001: a file written in place, in pieces, with no atomic rename: between two pieces its
    name holds a torn file, and a worker that dies there leaves it torn for every reader."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        if adapter.service == "files":
            adapter = _WrittenInPieces(adapter)
        super().__init__(session, adapter, step)


class _DeletedByName(Wrapped):
    """A delete that names only the file, never the version: the store removes whatever is
    there, and its 204 is taken as the proof."""

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        client = _client(self.adapter)
        if client is None or intent.operation != "delete":
            return self.adapter.send(intent, key)
        try:
            client.delete(str(intent.args["key"]), idempotency_key=key)
        except fs.OutcomeUnknown as exc:
            raise OutcomeUnknown(f"files delete: {exc}") from exc
        return Receipt(resource_id=str(intent.args["key"]), detail=dict(intent.args))


class UncheckedDelete(EffectExecutor):
    """001: a delete that does not verify the resource state before: it deletes whatever is
    at the name, a newer version another writer saved meanwhile as readily as its own."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        if adapter.service == "files":
            adapter = _DeletedByName(adapter)
        super().__init__(session, adapter, step)
