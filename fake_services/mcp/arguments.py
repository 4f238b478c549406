"""A tool's arguments and the one HTTP request they make.

Each model is the precise input schema an agent is shown and is validated before anything is
sent; its ``http()`` is the request a typed client (``clients.py``) would send for the same
call, header for header, so an MCP call and an HTTP call fingerprint alike in the journal. The
answer is reshaped only where the service answers bytes or nothing (``answer()``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Literal
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, Field, model_validator

SHA256 = r"^[0-9a-f]{64}$"
KEY_RULE = "journaled so the oracle can relate this delivery to your ledger; never deduplicated on"


@dataclass(frozen=True)
class HttpCall:
    """The request a tool call makes to the services."""

    method: str
    path: str
    params: dict[str, str] | None = None
    json: dict[str, Any] | None = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


class ToolArgs(BaseModel):
    """A tool's arguments; subclasses say which request they make and shape odd answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def http(self) -> HttpCall:
        raise NotImplementedError

    def answer(self, response: httpx.Response) -> dict[str, Any]:
        """A 2xx answer as the tool's result: the service's JSON body, unless said otherwise."""
        body: dict[str, Any] = response.json()
        return body


def _segment(value: str) -> str:
    return quote(value, safe="")


def _keyed(key: str | None) -> dict[str, str]:
    return {} if key is None else {"Idempotency-Key": key}


def _body(args: BaseModel, *fields: str) -> dict[str, Any]:
    """The JSON body: the fields given, an absent optional one left out (as a typed client
    leaves it), so the same call fingerprints the same whichever way absence was spelt."""
    return args.model_dump(include=set(fields), exclude_none=True)


def _readable(data: bytes) -> dict[str, str]:
    try:
        return {"content": data.decode("utf-8"), "encoding": "utf-8"}
    except UnicodeDecodeError:
        return {"content": base64.b64encode(data).decode("ascii"), "encoding": "base64"}


# -- payments ---------------------------------------------------------------------------------


class CreateCharge(ToolArgs):
    order_id: str = Field(min_length=1, description="your order's id")
    amount_cents: int = Field(gt=0, description="amount in cents")
    currency: str = Field(pattern=r"^[A-Z]{3}$", description='ISO code, e.g. "EUR"')
    customer: str | None = Field(default=None, description="whose charge it is")
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        description="Stripe's Idempotency-Key: the same key and arguments replay the first"
        " charge; without one every call is a new charge",
    )

    def http(self) -> HttpCall:
        body = _body(self, "order_id", "amount_cents", "currency", "customer")
        return HttpCall(
            "POST", "/payments/charges", json=body, headers=_keyed(self.idempotency_key)
        )


class ChargesByOrder(ToolArgs):
    order_id: str = Field(min_length=1)

    def http(self) -> HttpCall:
        return HttpCall("GET", "/payments/charges", params={"order_id": self.order_id})


class ChargeByKey(ToolArgs):
    key: str = Field(min_length=1, description="the Idempotency-Key the charge was made with")

    def http(self) -> HttpCall:
        return HttpCall("GET", f"/payments/charges/by-key/{_segment(self.key)}")


class Refund(ToolArgs):
    charge_id: str = Field(min_length=1)
    amount_cents: int = Field(gt=0, description="at most what is left of the charge")
    idempotency_key: str | None = Field(
        default=None, min_length=1, description="Stripe's Idempotency-Key, as for charges"
    )

    def http(self) -> HttpCall:
        body = _body(self, "charge_id", "amount_cents")
        return HttpCall(
            "POST", "/payments/refunds", json=body, headers=_keyed(self.idempotency_key)
        )


class RefundByKey(ToolArgs):
    key: str = Field(min_length=1, description="the Idempotency-Key the refund was made with")

    def http(self) -> HttpCall:
        return HttpCall("GET", f"/payments/refunds/by-key/{_segment(self.key)}")


# -- cms --------------------------------------------------------------------------------------


class CreatePost(ToolArgs):
    slug: str = Field(min_length=1)
    title: str
    body: str
    image_sha256: str | None = Field(default=None, pattern=SHA256)

    def http(self) -> HttpCall:
        # image_sha256 is sent even when null, as CmsClient sends it: the same fingerprint
        body = self.model_dump(include={"slug", "title", "body", "image_sha256"})
        return HttpCall("POST", "/cms/posts", json=body)


class PostsBySlug(ToolArgs):
    slug: str = Field(min_length=1)

    def http(self) -> HttpCall:
        return HttpCall("GET", "/cms/posts", params={"slug": self.slug})


class GetPost(ToolArgs):
    post_id: str = Field(min_length=1, description='e.g. "post_000001"')

    def http(self) -> HttpCall:
        return HttpCall("GET", f"/cms/posts/{_segment(self.post_id)}")


# -- mailer and outbound ----------------------------------------------------------------------


class SendMail(ToolArgs):
    to: str = Field(min_length=1)
    subject: str
    body: str

    def http(self) -> HttpCall:
        return HttpCall("POST", "/mailer/messages", json=_body(self, "to", "subject", "body"))


class SendOutbound(ToolArgs):
    to: str = Field(min_length=1)
    subject: str
    body: str
    metadata: dict[str, str] = Field(
        default_factory=dict, description="your name/value pairs, searchable; names unique"
    )
    idempotency_key: str | None = Field(default=None, min_length=1, description=KEY_RULE)

    def http(self) -> HttpCall:
        body = _body(self, "to", "subject", "body", "metadata")
        return HttpCall(
            "POST", "/outbound/messages", json=body, headers=_keyed(self.idempotency_key)
        )


class SearchOutbound(ToolArgs):
    name: str = Field(min_length=1, description="one metadata name")
    value: str

    def http(self) -> HttpCall:
        return HttpCall("GET", "/outbound/messages", params={f"metadata_{self.name}": self.value})

    def answer(self, response: httpx.Response) -> dict[str, Any]:
        """The page and when the search ran by the provider's clock (its `Date`)."""
        searched_at = parsedate_to_datetime(response.headers["date"]).timestamp()
        return {**super().answer(response), "searched_at": searched_at}


# -- publisher --------------------------------------------------------------------------------


class Publish(ToolArgs):
    ref: str = Field(min_length=1)
    content: str

    def http(self) -> HttpCall:
        return HttpCall("POST", "/publisher/publications", json=_body(self, "ref", "content"))


class ReadPublication(ToolArgs):
    ref: str = Field(min_length=1)

    def http(self) -> HttpCall:
        return HttpCall("GET", f"/publisher/publications/{_segment(self.ref)}")


# -- bytes: artifacts and files ---------------------------------------------------------------


class _Bytes(ToolArgs):
    """Bytes as text: UTF-8 as it is, anything else in base64."""

    content: str
    encoding: Literal["utf-8", "base64"] = "utf-8"

    @model_validator(mode="after")
    def _decodable(self) -> _Bytes:
        self.data()
        return self

    def data(self) -> bytes:
        if self.encoding == "utf-8":
            return self.content.encode("utf-8")
        try:
            return base64.b64decode(self.content, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"content is not base64: {exc}") from exc


class PutArtifact(_Bytes):
    media_type: str = "application/octet-stream"

    def http(self) -> HttpCall:
        data = self.data()
        address = hashlib.sha256(data).hexdigest()
        headers = {"Content-Type": self.media_type}
        return HttpCall("PUT", f"/artifacts/{address}", content=data, headers=headers)


class GetArtifact(ToolArgs):
    sha256: str = Field(pattern=SHA256, description="the artifact's address")

    def http(self) -> HttpCall:
        return HttpCall("GET", f"/artifacts/{self.sha256}")

    def answer(self, response: httpx.Response) -> dict[str, Any]:
        data = response.content
        return {
            "address": self.sha256,
            "sha256": hashlib.sha256(data).hexdigest(),  # of the bytes received
            "size": len(data),
            "media_type": response.headers.get("content-type"),
            **_readable(data),
        }


def _checksum(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")


def _files_path(key: str) -> str:
    return f"/files/{quote(key, safe='/')}"


class PutFile(_Bytes):
    key: str = Field(min_length=1)
    if_none_match: bool = Field(default=False, description="create only: refused if the key holds")
    if_match: str | None = Field(default=None, description="replace only the object of this etag")
    idempotency_key: str | None = Field(default=None, min_length=1, description=KEY_RULE)

    def http(self) -> HttpCall:
        data = self.data()
        headers = {"x-amz-checksum-sha256": _checksum(data), **_keyed(self.idempotency_key)}
        if self.if_none_match:
            headers["If-None-Match"] = "*"
        if self.if_match is not None:
            headers["If-Match"] = f'"{self.if_match}"'
        return HttpCall("PUT", _files_path(self.key), content=data, headers=headers)


class AppendFile(_Bytes):
    key: str = Field(min_length=1)
    offset: int = Field(ge=0, description="the object's size now (0 creates it)")
    idempotency_key: str | None = Field(default=None, min_length=1, description=KEY_RULE)

    def http(self) -> HttpCall:
        headers = {"x-amz-write-offset-bytes": str(self.offset), **_keyed(self.idempotency_key)}
        return HttpCall("PATCH", _files_path(self.key), content=self.data(), headers=headers)


class GetFile(ToolArgs):
    key: str = Field(min_length=1)

    def http(self) -> HttpCall:
        return HttpCall("GET", _files_path(self.key))

    def answer(self, response: httpx.Response) -> dict[str, Any]:
        data = response.content
        etag = response.headers.get("etag", "").strip('"')
        return {"key": self.key, "etag": etag, "size": len(data), **_readable(data)}


class DeleteFile(ToolArgs):
    key: str = Field(min_length=1)
    if_match: str | None = Field(
        default=None, description='delete only the object of this etag ("*": whatever is there)'
    )
    idempotency_key: str | None = Field(default=None, min_length=1, description=KEY_RULE)

    def http(self) -> HttpCall:
        headers = _keyed(self.idempotency_key)
        if self.if_match is not None:
            headers["If-Match"] = f'"{self.if_match}"'
        return HttpCall("DELETE", _files_path(self.key), headers=headers)

    def answer(self, response: httpx.Response) -> dict[str, Any]:
        return {"key": self.key, "status": response.status_code}
