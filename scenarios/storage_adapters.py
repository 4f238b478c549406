"""Adapters of the services that keep bytes: the content-addressed artifact store and the
S3-like file store, with the intent arguments each expects."""

from __future__ import annotations

import base64
import hashlib
from contextlib import suppress

import httpx
from pydantic import JsonValue

from killpoint import fake_services as fs
from killpoint.contract.errors import CannotTell, EffectRejected, OutcomeUnknown
from killpoint.contract.records import EffectIntent, Receipt
from killpoint.scenarios._adapting import arg_str, operation_of, translated, unknown_operation


def artifact_args(
    data: bytes, media_type: str = "application/octet-stream"
) -> dict[str, JsonValue]:
    """The intent arguments of an artifact upload: its address and (small) content inline."""
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "media_type": media_type,
        "content_b64": base64.b64encode(data).decode("ascii"),
    }


class ArtifactsAdapter:
    """Uploads to the content-addressed store: idempotent by hash, queryable by GET.

    The bytes travel inline in the intent (`artifact_args`), which suits the small assets
    scenarios upload; anything large belongs in the engine's own artifact store instead.
    """

    service = "artifacts"
    idempotent = True  # the address is the hash: a re-upload of the same bytes is a no-op
    queryable = True
    irreversible = False  # an unreferenced content-addressed blob is inert

    def __init__(self, http: httpx.Client) -> None:
        self.client = fs.ArtifactsClient(http)

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        if operation_of(intent) != "put":
            raise unknown_operation(self.service, intent)
        data = base64.b64decode(arg_str(intent, "content_b64"))
        with translated(self.service, intent.operation):
            sha256 = self.client.put(data, arg_str(intent, "media_type"))
        if sha256 != intent.args.get("sha256"):
            raise EffectRejected(f"artifact content hashes to {sha256}, not its declared address")
        return self._receipt(sha256, len(data))

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        sha256 = arg_str(intent, "sha256")
        try:
            with translated(self.service, "get"):
                data = self.client.get(sha256)
        except EffectRejected:  # 404: nothing at that address
            return None
        except fs.ArtifactCorrupt as exc:  # something is there, but this read proves nothing
            raise OutcomeUnknown(str(exc)) from exc
        return self._receipt(sha256, len(data))

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        try:
            with translated(self.service, "get"):
                self.client.get(receipt.resource_id)
        except (EffectRejected, fs.ArtifactCorrupt):
            return False
        return True

    @staticmethod
    def _receipt(sha256: str, size: int) -> Receipt:
        return Receipt(resource_id=sha256, result_hash=sha256, detail={"size": size})


def file_args(key: str, data: bytes) -> dict[str, JsonValue]:
    """The intent arguments of a file write: where, its sha256 and the (small) bytes inline."""
    return {
        "key": key,
        "sha256": hashlib.sha256(data).hexdigest(),
        "content_b64": base64.b64encode(data).decode("ascii"),
    }


class FilesAdapter:
    """Files in an object store with S3's rules (seed 001: "for file writes, use content
    hashes and atomic rename. For deletes, verify the resource state before and after").

    A write (`put`, `file_args`) is one PUT carrying its sha256 checksum, which S3 stores whole
    or not at all: S3's atomic rename, no temporary name needed; it may only create
    (`If-None-Match: *`), so a retry never replaces anything, and an object already there is
    this write's own only if its hash is the intent's. A delete (`{key, if_match}`) names the
    version it removes (`If-Match`), the state checked before in the same request, and a read
    checks the state after: gone, or no longer that version. The ledger's key goes along as
    `Idempotency-Key`, which S3 ignores and the journal keeps.
    """

    service = "files"
    idempotent = True  # a create-only write and a conditional delete cannot apply twice
    queryable = True
    irreversible = True  # a deleted object is gone: the store keeps no versions

    def __init__(self, http: httpx.Client) -> None:
        self.client = fs.FilesClient(http)

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        target = arg_str(intent, "key")
        with translated(self.service, intent.operation):
            if operation_of(intent) == "put":
                data = base64.b64decode(arg_str(intent, "content_b64"))
                try:
                    self.client.put(target, data, if_none_match=True, idempotency_key=key)
                except fs.Rejected as exc:  # 412: something is there; this write's own?
                    if exc.status != 412 or self._version(intent) != intent.args.get("sha256"):
                        raise
                return self._receipt(intent)
            if operation_of(intent) == "delete":
                with suppress(fs.NotFound):  # nothing at the key: that version is gone already
                    self.client.delete(
                        target, if_match=arg_str(intent, "if_match"), idempotency_key=key
                    )
                return self._receipt(intent)
        raise unknown_operation(self.service, intent)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        version = self._version(intent)
        if operation_of(intent) == "put":
            if version is not None and version != intent.args.get("sha256"):
                raise CannotTell(f"another object is at {arg_str(intent, 'key')!r}")
            return None if version is None else self._receipt(intent)
        if operation_of(intent) == "delete":  # done once that version is not there
            return None if version == intent.args.get("if_match") else self._receipt(intent)
        raise unknown_operation(self.service, intent)

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        version = self._version(intent)
        if operation_of(intent) == "delete":
            return version != intent.args.get("if_match")
        return version == intent.args.get("sha256")

    def _version(self, intent: EffectIntent) -> str | None:
        """The sha256 of the object now at the intent's key (None: nothing there)."""
        with translated(self.service, "get"):
            data = self.client.get(arg_str(intent, "key"))
        return None if data is None else hashlib.sha256(data).hexdigest()

    @staticmethod
    def _receipt(intent: EffectIntent) -> Receipt:
        fields = {k: v for k, v in intent.args.items() if k != "content_b64"}
        return Receipt(resource_id=arg_str(intent, "key"), detail=fields)
