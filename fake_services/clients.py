"""Typed clients for the fake services, used by scenario adapters.

They turn HTTP into the three outcomes an engine has to handle: a value, :class:`Rejected`
(nothing applied) or :class:`OutcomeUnknown` (maybe applied). Any transport error counts as
unknown, even a refused connection: an engine should reconcile rather than guess. So does a 409
``idempotency_key_in_use``: the key's first request is still running and may yet apply.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from killpoint.fake_services.errors import ArtifactCorrupt, NotFound, OutcomeUnknown, Rejected
from killpoint.fake_services.models import (
    Charge,
    FileObject,
    Message,
    OutboundMessage,
    Post,
    Publication,
    Refund,
)


def _send(client: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
    try:
        response = client.request(method, url, **kwargs)
    except httpx.TransportError as exc:
        raise OutcomeUnknown(f"{method} {url}: {type(exc).__name__}: {exc}") from exc
    if response.status_code >= 500 or _in_use(response):
        raise OutcomeUnknown(f"{method} {url}: {response.status_code}", status=response.status_code)
    if response.status_code == 404:
        raise NotFound(_body(response))
    if response.status_code >= 400:
        raise Rejected(response.status_code, _body(response))
    return response


def _in_use(response: httpx.Response) -> bool:
    """Stripe's 409 for a key whose first request is still running: retry later, it may land."""
    if response.status_code != 409:
        return False
    body = _body(response)
    return isinstance(body, dict) and body.get("error") == "idempotency_key_in_use"


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def _keyed(idempotency_key: str | None) -> dict[str, str]:
    return {} if idempotency_key is None else {"Idempotency-Key": idempotency_key}


class PaymentsClient:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def create_charge(
        self, idempotency_key: str, order_id: str, amount_cents: int, currency: str
    ) -> Charge:
        body = {"order_id": order_id, "amount_cents": amount_cents, "currency": currency}
        response = _send(
            self.http, "POST", "/payments/charges", json=body, headers=_keyed(idempotency_key)
        )
        return Charge.model_validate(response.json())

    def charge_by_key(self, key: str) -> Charge | None:
        try:
            return Charge.model_validate(
                _send(self.http, "GET", f"/payments/charges/by-key/{key}").json()
            )
        except NotFound:
            return None

    def charges_by_order(self, order_id: str) -> list[Charge]:
        """Every charge under `order_id`, other customers' too, oldest first."""
        response = _send(self.http, "GET", "/payments/charges", params={"order_id": order_id})
        return [Charge.model_validate(charge) for charge in response.json()["charges"]]

    def refund(self, idempotency_key: str, charge_id: str, amount_cents: int) -> Refund:
        body = {"charge_id": charge_id, "amount_cents": amount_cents}
        response = _send(
            self.http, "POST", "/payments/refunds", json=body, headers=_keyed(idempotency_key)
        )
        return Refund.model_validate(response.json())

    def refund_by_key(self, key: str) -> Refund | None:
        try:
            return Refund.model_validate(
                _send(self.http, "GET", f"/payments/refunds/by-key/{key}").json()
            )
        except NotFound:
            return None


class CmsClient:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def create_post(
        self, slug: str, title: str, body: str, image_sha256: str | None = None
    ) -> Post:
        payload = {"slug": slug, "title": title, "body": body, "image_sha256": image_sha256}
        return Post.model_validate(_send(self.http, "POST", "/cms/posts", json=payload).json())

    def posts_by_slug(self, slug: str) -> list[Post]:
        response = _send(self.http, "GET", "/cms/posts", params={"slug": slug})
        return [Post.model_validate(post) for post in response.json()["posts"]]

    def get_post(self, post_id: str) -> Post | None:
        try:
            return Post.model_validate(_send(self.http, "GET", f"/cms/posts/{post_id}").json())
        except NotFound:
            return None


class MailerClient:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def send(self, to: str, subject: str, body: str) -> Message:
        payload = {"to": to, "subject": subject, "body": body}
        return Message.model_validate(
            _send(self.http, "POST", "/mailer/messages", json=payload).json()
        )


@dataclass(frozen=True)
class SearchPage:
    """What a search of sent messages showed, and when by the provider's clock (`Date`)."""

    messages: list[OutboundMessage]
    searched_at: float


class OutboundClient:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def send(
        self,
        to: str,
        subject: str,
        body: str,
        metadata: dict[str, str],
        idempotency_key: str | None = None,
    ) -> OutboundMessage:
        """Send a message carrying `metadata`; the provider takes no idempotency key (one
        given is journaled for the oracle, not honoured)."""
        payload = {"to": to, "subject": subject, "body": body, "metadata": metadata}
        headers = _keyed(idempotency_key)
        response = _send(self.http, "POST", "/outbound/messages", json=payload, headers=headers)
        return OutboundMessage.model_validate(response.json())

    def search(self, name: str, value: str) -> SearchPage:
        """The sent messages whose metadata `name` is `value`, as far as the search shows."""
        response = _send(self.http, "GET", "/outbound/messages", params={f"metadata_{name}": value})
        messages = [OutboundMessage.model_validate(m) for m in response.json()["messages"]]
        date = parsedate_to_datetime(response.headers["date"]).timestamp()
        return SearchPage(messages, date)


class PublisherClient:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def publish(self, ref: str, content: str) -> Publication:
        payload = {"ref": ref, "content": content}
        response = _send(self.http, "POST", "/publisher/publications", json=payload)
        return Publication.model_validate(response.json())

    def read(self, ref: str) -> Publication | None:
        """The publication, or None while it is not (yet) visible."""
        try:
            response = _send(self.http, "GET", f"/publisher/publications/{ref}")
        except NotFound:
            return None
        return Publication.model_validate(response.json())


class ArtifactsClient:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def put(self, data: bytes, media_type: str = "application/octet-stream") -> str:
        """Store ``data`` and return its address (sha256 hex)."""
        sha256 = hashlib.sha256(data).hexdigest()
        headers = {"Content-Type": media_type}
        _send(self.http, "PUT", f"/artifacts/{sha256}", content=data, headers=headers)
        return sha256

    def get(self, sha256: str, *, verify: bool = True) -> bytes:
        """The bytes at ``sha256``; raises NotFound, or ArtifactCorrupt if they don't match.

        ``verify=False`` hands back whatever was served, for engines that check themselves
        (and for mutants that forget to).
        """
        data = _send(self.http, "GET", f"/artifacts/{sha256}").content
        actual = hashlib.sha256(data).hexdigest()
        if verify and actual != sha256:
            raise ArtifactCorrupt(sha256, actual)
        return data


class FilesClient:
    """The object store, S3's way: whole writes with a checksum and a condition, appends,
    reads, and deletes that answer 204 whatever was there unless told which version."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def put(
        self,
        key: str,
        data: bytes,
        *,
        if_none_match: bool = False,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> FileObject:
        sha = base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")
        headers = {"x-amz-checksum-sha256": sha, **_conditions(if_none_match, if_match)}
        headers.update(_keyed(idempotency_key))
        response = _send(self.http, "PUT", f"/files/{key}", content=data, headers=headers)
        return FileObject.model_validate(response.json())

    def append(
        self, key: str, offset: int, data: bytes, idempotency_key: str | None = None
    ) -> FileObject:
        """Add `data` at the end of the object (at `offset`, its size; 0 creates it)."""
        headers = {"x-amz-write-offset-bytes": str(offset), **_keyed(idempotency_key)}
        response = _send(self.http, "PATCH", f"/files/{key}", content=data, headers=headers)
        return FileObject.model_validate(response.json())

    def get(self, key: str) -> bytes | None:
        """The object's bytes, or None when nothing is at the key."""
        try:
            return _send(self.http, "GET", f"/files/{key}").content
        except NotFound:
            return None

    def delete(
        self, key: str, *, if_match: str | None = None, idempotency_key: str | None = None
    ) -> None:
        headers = {**_conditions(False, if_match), **_keyed(idempotency_key)}
        _send(self.http, "DELETE", f"/files/{key}", headers=headers)


def _conditions(if_none_match: bool, if_match: str | None) -> dict[str, str]:
    found = {"If-None-Match": "*"} if if_none_match else {}
    return found if if_match is None else {**found, "If-Match": f'"{if_match}"'}
