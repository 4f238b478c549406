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

from collections.abc import Mapping
from typing import Any

import httpx

from killpoint import fake_services as fs
from killpoint.contract.adapters import Capabilities, EffectAdapter
from killpoint.contract.errors import CannotTell, OutcomeUnknown
from killpoint.contract.records import EffectIntent, Receipt
from killpoint.fake_services.realism import SEARCH_WINDOW_S
from killpoint.scenarios._adapting import (
    arg_int,
    arg_str,
    operation_of,
    receipt_of,
    translated,
    unknown_operation,
)
from killpoint.scenarios.storage_adapters import (
    ArtifactsAdapter,
    FilesAdapter,
    artifact_args,
    file_args,
)

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


class PaymentsAdapter:
    """Charges and refunds; the ledger's key is sent as `Idempotency-Key` and looked up by."""

    service = "payments"
    idempotent = True
    queryable = True
    irreversible = False  # a charge is undone by a refund

    def __init__(self, http: httpx.Client) -> None:
        self.client = fs.PaymentsClient(http)

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        with translated(self.service, intent.operation):
            if operation_of(intent) == "charge":
                charge = self.client.create_charge(
                    key,
                    arg_str(intent, "order_id"),
                    arg_int(intent, "amount_cents"),
                    arg_str(intent, "currency"),
                )
                return self._charge_receipt(charge)
            if operation_of(intent) == "refund":
                refund = self.client.refund(
                    key, arg_str(intent, "charge_id"), arg_int(intent, "amount_cents")
                )
                return self._refund_receipt(refund)
        raise unknown_operation(self.service, intent)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        with translated(self.service, intent.operation):
            if operation_of(intent) == "charge":
                charge = self.client.charge_by_key(key)
                return None if charge is None else self._charge_receipt(charge)
            if operation_of(intent) == "refund":
                refund = self.client.refund_by_key(key)
                return None if refund is None else self._refund_receipt(refund)
        raise unknown_operation(self.service, intent)

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
        return receipt_of(
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
        return receipt_of(
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
        if operation_of(intent) != "create_post":
            raise unknown_operation(self.service, intent)
        image = intent.args.get("image_sha256")
        with translated(self.service, intent.operation):
            post = self.client.create_post(
                arg_str(intent, "slug"),
                arg_str(intent, "title"),
                arg_str(intent, "body"),
                image_sha256=None if image is None else str(image),
            )
        return self._receipt(post)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        with translated(self.service, "posts_by_slug"):
            posts = self.client.posts_by_slug(arg_str(intent, "slug"))
        return self._receipt(posts[0]) if posts else None

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        with translated(self.service, "get_post"):
            post = self.client.get_post(receipt.resource_id)
        return post is not None and post.slug == intent.args.get("slug")

    @staticmethod
    def _receipt(post: fs.Post) -> Receipt:
        return receipt_of(
            post.id, post.model_dump(), slug=post.slug, image_sha256=post.image_sha256
        )


class MailerAdapter:
    """E-mail: not idempotent, irreversible, and with no way to ask whether a message went out."""

    service = "mailer"
    idempotent = False
    queryable = False
    irreversible = True

    def __init__(self, http: httpx.Client) -> None:
        self.client = fs.MailerClient(http)

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        if operation_of(intent) != "send":
            raise unknown_operation(self.service, intent)
        with translated(self.service, intent.operation):
            message = self.client.send(
                arg_str(intent, "to"), arg_str(intent, "subject"), arg_str(intent, "body")
            )
        return receipt_of(message.id, message.model_dump(), to=message.to, sent_at=message.sent_at)

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
        if operation_of(intent) != "send":
            raise unknown_operation(self.service, intent)
        self.missed.pop(key, None)  # a new attempt: an earlier empty search proves nothing now
        with translated(self.service, intent.operation):
            message = self.client.send(
                arg_str(intent, "to"),
                arg_str(intent, "subject"),
                arg_str(intent, "body"),
                {FINGERPRINT: key},
                idempotency_key=key,
            )
        return self._receipt(message)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        with translated(self.service, "search"):
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
        with translated(self.service, "search"):
            page = self.client.search(FINGERPRINT, fingerprint)
        return any(m.id == receipt.resource_id for m in page.messages)

    @staticmethod
    def _receipt(message: fs.OutboundMessage) -> Receipt:
        return receipt_of(
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
        if operation_of(intent) != "publish":
            raise unknown_operation(self.service, intent)
        with translated(self.service, intent.operation):
            publication = self.client.publish(arg_str(intent, "ref"), arg_str(intent, "content"))
        return self._receipt(publication.ref, publication.model_dump())

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        """Present if readable; absent only on `not_found`.

        An eventually-consistent 404 alone does not prove absence, so the service's own error
        code decides: `not_visible` means it holds the publication but does not show it yet
        (the verify step waits for it), `not_found` means it holds nothing under that ref.
        One raw read, because every read counts towards the publication's visibility.
        """
        ref = arg_str(intent, "ref")
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
        with translated(self.service, "read"):
            return self.client.read(arg_str(intent, "ref")) is not None

    @staticmethod
    def _receipt(ref: str, document: Mapping[str, Any]) -> Receipt:
        return receipt_of(ref, document, ref=ref, visible=True)


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
