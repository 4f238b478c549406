"""Effect adapters: the engine's `EffectAdapter` contract over the fake services' typed clients.

The engine never speaks HTTP; it asks an adapter to send, look up and verify. Two things make an
adapter trustworthy and both live here: the three flags say exactly what each service can do
(recognise a retried key, answer "did it happen?", be undone), and the services' three outcomes
are translated without loss — `OutcomeUnknown` (timeout, lost response, 5xx) stays unknown,
`Rejected` (4xx) becomes a definite `EffectRejected`, and a service with no lookup answers
`CannotTell` rather than guessing. An adapter that turned a timeout into a rejection would be
exactly the bug killpoint hunts.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any

import httpx
from pydantic import JsonValue

from killpoint import fake_services as fs
from killpoint.fake_services.realism import SEARCH_WINDOW_S
from killpoint.harness.contract.adapters import Capabilities, EffectAdapter
from killpoint.harness.contract.errors import (
    CannotTell,
    DefinitionError,
    EffectRejected,
    OutcomeUnknown,
)
from killpoint.harness.contract.records import EffectIntent, Receipt
from killpoint.scenarios._common import json_bytes

__all__ = [
    "FINGERPRINT",
    "SERVICES",
    "ArtifactsAdapter",
    "CmsAdapter",
    "FilesAdapter",
    "MailerAdapter",
    "OutboundAdapter",
    "PaymentsAdapter",
    "PublisherAdapter",
    "adapters_for",
    "artifact_args",
    "file_args",
]


@contextmanager
def _translated(service: str, operation: str) -> Iterator[None]:
    """Map the services' outcomes onto the engine's: unknown stays unknown, 4xx is definite."""
    try:
        yield
    except fs.OutcomeUnknown as exc:
        raise OutcomeUnknown(f"{service} {operation}: {exc}") from exc
    except fs.Rejected as exc:
        raise EffectRejected(f"{service} {operation}: {exc}") from exc


def _receipt(resource_id: str, document: Mapping[str, Any], **detail: JsonValue) -> Receipt:
    digest = hashlib.sha256(json_bytes(dict(document))).hexdigest()
    return Receipt(resource_id=resource_id, result_hash=digest, detail=dict(detail))


def _operation(intent: EffectIntent) -> str:
    """The service operation an intent names; a batch item may suffix it (`create_post#3`)."""
    return intent.operation.partition("#")[0]


def _unknown_operation(service: str, intent: EffectIntent) -> DefinitionError:
    return DefinitionError(f"{service} has no effect operation {intent.operation!r}")


def _str(intent: EffectIntent, name: str) -> str:
    return str(intent.args[name])


def _int(intent: EffectIntent, name: str) -> int:
    value = intent.args[name]
    if not isinstance(value, int):
        raise DefinitionError(f"{intent.operation}: argument {name!r} must be an int")
    return value


class PaymentsAdapter:
    """Charges and refunds; the ledger's key is sent as `Idempotency-Key` and looked up by."""

    service = "payments"
    idempotent = True
    queryable = True
    irreversible = False  # a charge is undone by a refund

    def __init__(self, http: httpx.Client) -> None:
        self.client = fs.PaymentsClient(http)

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        with _translated(self.service, intent.operation):
            if _operation(intent) == "charge":
                charge = self.client.create_charge(
                    key,
                    _str(intent, "order_id"),
                    _int(intent, "amount_cents"),
                    _str(intent, "currency"),
                )
                return self._charge_receipt(charge)
            if _operation(intent) == "refund":
                refund = self.client.refund(
                    key, _str(intent, "charge_id"), _int(intent, "amount_cents")
                )
                return self._refund_receipt(refund)
        raise _unknown_operation(self.service, intent)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        with _translated(self.service, intent.operation):
            if _operation(intent) == "charge":
                charge = self.client.charge_by_key(key)
                return None if charge is None else self._charge_receipt(charge)
            if _operation(intent) == "refund":
                refund = self.client.refund_by_key(key)
                return None if refund is None else self._refund_receipt(refund)
        raise _unknown_operation(self.service, intent)

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        key = receipt.detail.get("idempotency_key")
        if not isinstance(key, str):
            return False
        found = self.lookup(intent, key)
        return (
            found is not None
            and found.resource_id == receipt.resource_id
            and found.detail.get("status") == "succeeded"
        )

    @staticmethod
    def _charge_receipt(charge: fs.Charge) -> Receipt:
        return _receipt(
            charge.id,
            charge.model_dump(),
            order_id=charge.order_id,
            amount_cents=charge.amount_cents,
            currency=charge.currency,
            status=charge.status,
            idempotency_key=charge.idempotency_key,
        )

    @staticmethod
    def _refund_receipt(refund: fs.Refund) -> Receipt:
        return _receipt(
            refund.id,
            refund.model_dump(),
            charge_id=refund.charge_id,
            amount_cents=refund.amount_cents,
            status=refund.status,
            idempotency_key=refund.idempotency_key,
        )


class CmsAdapter:
    """Posts. Not idempotent (every create is a new post), but the slug can be looked up."""

    service = "cms"
    idempotent = False
    queryable = True
    irreversible = False  # a post can be unpublished (the fake has no delete endpoint)

    def __init__(self, http: httpx.Client) -> None:
        self.client = fs.CmsClient(http)

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        if _operation(intent) != "create_post":
            raise _unknown_operation(self.service, intent)
        image = intent.args.get("image_sha256")
        with _translated(self.service, intent.operation):
            post = self.client.create_post(
                _str(intent, "slug"),
                _str(intent, "title"),
                _str(intent, "body"),
                image_sha256=None if image is None else str(image),
            )
        return self._receipt(post)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        with _translated(self.service, "posts_by_slug"):
            posts = self.client.posts_by_slug(_str(intent, "slug"))
        return self._receipt(posts[0]) if posts else None

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        with _translated(self.service, "get_post"):
            post = self.client.get_post(receipt.resource_id)
        return post is not None and post.slug == intent.args.get("slug")

    @staticmethod
    def _receipt(post: fs.Post) -> Receipt:
        return _receipt(post.id, post.model_dump(), slug=post.slug, image_sha256=post.image_sha256)


class MailerAdapter:
    """E-mail: not idempotent, irreversible, and with no way to ask whether a message went out."""

    service = "mailer"
    idempotent = False
    queryable = False
    irreversible = True

    def __init__(self, http: httpx.Client) -> None:
        self.client = fs.MailerClient(http)

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        if _operation(intent) != "send":
            raise _unknown_operation(self.service, intent)
        with _translated(self.service, intent.operation):
            message = self.client.send(
                _str(intent, "to"), _str(intent, "subject"), _str(intent, "body")
            )
        return _receipt(message.id, message.model_dump(), to=message.to, sent_at=message.sent_at)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        raise CannotTell("the mailer offers no lookup of sent messages")

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        # The mailer has no read API; the seed counts the provider's message id as the proof
        # ("the mail provider's message ID and status are"), so a receipt carrying one verifies.
        return bool(receipt.resource_id) and receipt.detail.get("to") == intent.args.get("to")


FINGERPRINT = "fingerprint"  # the metadata name an outbox's message fingerprint travels under


class OutboundAdapter:
    """E-mail through a provider with no idempotency key but a search of sent messages by the
    sender's metadata: the other half of a local outbox (seed 001: "if the provider lacks
    native support, create a local outbox with a uniqueness constraint. For emails, store a
    message fingerprint and provider message ID").

    The engine's ledger row is the outbox entry: its unique idempotency key is the message
    fingerprint, sent as metadata with the message, and its receipt keeps the provider's
    message id. A message in doubt is looked up by its fingerprint: found, its receipt; absent
    only once an empty search came a whole search window after an earlier empty one, for the
    search lags the sends (the provider's `Date` says when each search ran). Until then the
    lookup raises `OutcomeUnknown`, so an engine asks again later; an engine that cannot wait
    sees `CannotTell` and escalates, as it must for an irreversible send.
    """

    service = "outbound"
    idempotent = False
    queryable = True
    irreversible = True

    def __init__(self, http: httpx.Client) -> None:
        self.client = fs.OutboundClient(http)
        # fingerprint -> provider time of the first empty search since the last send: an
        # empty search proves nothing alone; kept in memory, so a new worker waits again
        self.missed: dict[str, float] = {}

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        if _operation(intent) != "send":
            raise _unknown_operation(self.service, intent)
        self.missed.pop(key, None)  # a new attempt: an earlier empty search proves nothing now
        with _translated(self.service, intent.operation):
            message = self.client.send(
                _str(intent, "to"),
                _str(intent, "subject"),
                _str(intent, "body"),
                {FINGERPRINT: key},
                idempotency_key=key,
            )
        return self._receipt(message)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        with _translated(self.service, "search"):
            page = self.client.search(FINGERPRINT, key)
        if page.messages:
            self.missed.pop(key, None)
            return self._receipt(page.messages[-1])  # the first sent, if ever more than one
        first = self.missed.setdefault(key, page.searched_at)
        # `Date` counts whole seconds: a full window between two empty searches, plus one
        if page.searched_at - first >= SEARCH_WINDOW_S + 1:
            del self.missed[key]
            return None
        raise OutcomeUnknown(
            f"outbound search: no message with fingerprint {key[:14]}… yet; the search lags "
            f"the sends by up to {SEARCH_WINDOW_S:g}s, so this is not yet proof of absence"
        )

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        fingerprint = receipt.detail.get(FINGERPRINT)
        if not isinstance(fingerprint, str):
            return False
        with _translated(self.service, "search"):
            page = self.client.search(FINGERPRINT, fingerprint)
        return any(m.id == receipt.resource_id for m in page.messages)

    @staticmethod
    def _receipt(message: fs.OutboundMessage) -> Receipt:
        return _receipt(
            message.id,
            message.model_dump(),
            to=message.to,
            sent_at=message.sent_at,
            fingerprint=message.metadata.get(FINGERPRINT),
        )


class PublisherAdapter:
    """Publications by ref. Not idempotent; reads are eventually consistent."""

    service = "publisher"
    idempotent = False
    queryable = True
    irreversible = False  # a publication can be replaced by a newer version of its ref

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.client = fs.PublisherClient(http)

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        if _operation(intent) != "publish":
            raise _unknown_operation(self.service, intent)
        with _translated(self.service, intent.operation):
            publication = self.client.publish(_str(intent, "ref"), _str(intent, "content"))
        return self._receipt(publication.ref, publication.model_dump())

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        """Present if readable; absent only on `not_found`.

        An eventually-consistent 404 alone does not prove absence, so the service's own error
        code decides: `not_visible` means it holds the publication but does not show it yet
        (the verify step waits for it), `not_found` means it holds nothing under that ref.
        One raw read, because every read counts towards the publication's visibility.
        """
        ref = _str(intent, "ref")
        if not ref:
            return None  # the service refuses an empty ref, so it can hold nothing under one
        try:
            response = self.http.get(f"/publisher/publications/{ref}")
        except httpx.TransportError as exc:
            raise OutcomeUnknown(f"publisher read {ref!r}: {exc}") from exc
        if response.status_code == 200:
            return self._receipt(ref, fs.Publication.model_validate(response.json()).model_dump())
        error = response.json().get("error") if response.status_code == 404 else None
        if error == "not_visible":
            return Receipt(resource_id=ref, detail={"ref": ref, "visible": False})
        if error == "not_found":
            return None
        raise OutcomeUnknown(f"publisher read {ref!r}: {response.status_code}")

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        with _translated(self.service, "read"):
            return self.client.read(_str(intent, "ref")) is not None

    @staticmethod
    def _receipt(ref: str, document: Mapping[str, Any]) -> Receipt:
        return _receipt(ref, document, ref=ref, visible=True)


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
        if _operation(intent) != "put":
            raise _unknown_operation(self.service, intent)
        data = base64.b64decode(_str(intent, "content_b64"))
        with _translated(self.service, intent.operation):
            sha256 = self.client.put(data, _str(intent, "media_type"))
        if sha256 != intent.args.get("sha256"):
            raise EffectRejected(f"artifact content hashes to {sha256}, not its declared address")
        return self._receipt(sha256, len(data))

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        sha256 = _str(intent, "sha256")
        try:
            with _translated(self.service, "get"):
                data = self.client.get(sha256)
        except EffectRejected:  # 404: nothing at that address
            return None
        except fs.ArtifactCorrupt as exc:  # something is there, but this read proves nothing
            raise OutcomeUnknown(str(exc)) from exc
        return self._receipt(sha256, len(data))

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        try:
            with _translated(self.service, "get"):
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
        target = _str(intent, "key")
        with _translated(self.service, intent.operation):
            if _operation(intent) == "put":
                data = base64.b64decode(_str(intent, "content_b64"))
                try:
                    self.client.put(target, data, if_none_match=True, idempotency_key=key)
                except fs.Rejected as exc:  # 412: something is there; this write's own?
                    if exc.status != 412 or self._version(intent) != intent.args.get("sha256"):
                        raise
                return self._receipt(intent)
            if _operation(intent) == "delete":
                with suppress(fs.NotFound):  # nothing at the key: that version is gone already
                    self.client.delete(
                        target, if_match=_str(intent, "if_match"), idempotency_key=key
                    )
                return self._receipt(intent)
        raise _unknown_operation(self.service, intent)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        version = self._version(intent)
        if _operation(intent) == "put":
            if version is not None and version != intent.args.get("sha256"):
                raise CannotTell(f"another object is at {_str(intent, 'key')!r}")
            return None if version is None else self._receipt(intent)
        if _operation(intent) == "delete":  # done once that version is not there
            return None if version == intent.args.get("if_match") else self._receipt(intent)
        raise _unknown_operation(self.service, intent)

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        version = self._version(intent)
        if _operation(intent) == "delete":
            return version != intent.args.get("if_match")
        return version == intent.args.get("sha256")

    def _version(self, intent: EffectIntent) -> str | None:
        """The sha256 of the object now at the intent's key (None: nothing there)."""
        with _translated(self.service, "get"):
            data = self.client.get(_str(intent, "key"))
        return None if data is None else hashlib.sha256(data).hexdigest()

    @staticmethod
    def _receipt(intent: EffectIntent) -> Receipt:
        fields = {k: v for k, v in intent.args.items() if k != "content_b64"}
        return Receipt(resource_id=_str(intent, "key"), detail=fields)


SERVICES: dict[str, Capabilities] = {
    cls.service: cls
    for cls in (
        PaymentsAdapter,
        CmsAdapter,
        MailerAdapter,
        OutboundAdapter,
        PublisherAdapter,
        ArtifactsAdapter,
        FilesAdapter,
    )
}  # the recovery flags of each service, for the operator view


def adapters_for(http: httpx.Client) -> dict[str, EffectAdapter]:
    """One adapter per fake service, all sharing one client (and so one fault plan)."""
    adapters: tuple[EffectAdapter, ...] = (
        PaymentsAdapter(http),
        CmsAdapter(http),
        MailerAdapter(http),
        OutboundAdapter(http),
        PublisherAdapter(http),
        ArtifactsAdapter(http),
        FilesAdapter(http),
    )
    return {adapter.service: adapter for adapter in adapters}
