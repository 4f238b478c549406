"""The tools: one per service operation, each the HTTP request it stands for.

An agent that reaches the fake services through MCP must meet the same world as one that calls
HTTP: the same rules (a key only where the real API takes one, a lookup only where the service
answers one: none for the mailer) and the same journal. So a tool is nothing but its arguments
(a pydantic model: the precise input schema an agent is shown, validated before anything is
sent) and the one HTTP request they make; the answer is shaped only where the service answers
bytes or nothing. The names come from ``faults.OPERATIONS``: ``<service>_<operation>``.
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
from mcp.types import Tool, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, model_validator

from killpoint.fake_services.faults import OPERATIONS

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
        body = _body(self, "slug", "title", "body", "image_sha256")
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


# -- the table --------------------------------------------------------------------------------

_METHODS = {(service, operation): method for method, _, service, operation in OPERATIONS}


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the service operation it is, its rule in a sentence, its arguments."""

    service: str
    operation: str
    description: str
    arguments: type[ToolArgs]
    idempotent: bool = False

    @property
    def name(self) -> str:
        return f"{self.service}_{self.operation}"

    @property
    def read_only(self) -> bool:
        """A lookup: its 404 ``not_found`` / ``not_visible`` is an answer, not a rejection."""
        return _METHODS[(self.service, self.operation)] == "GET"

    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.arguments)

    def tool(self) -> Tool:
        annotations = ToolAnnotations(
            read_only_hint=self.read_only,
            idempotent_hint=self.read_only or self.idempotent,
            destructive_hint=False if self.read_only else None,
            open_world_hint=True,
        )
        return Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema(),
            annotations=annotations,
        )


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema without pydantic's generated titles (noise in a prompt)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


NOT_FOUND = "or {found: false, error: not_found}"
UNKNOWN = "a lost response cannot be resolved by asking"

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "payments",
        "create_charge",
        "Charge an order. Idempotent by idempotency_key (Stripe): the same key and arguments"
        " replay the first charge, the same key with other arguments is rejected; without a"
        " key every call is a new charge.",
        CreateCharge,
        idempotent=True,
    ),
    ToolSpec(
        "payments",
        "charges_by_order",
        "Every charge under an order id, oldest first, other customers' too: only your"
        " idempotency key or charge id tells yours apart.",
        ChargesByOrder,
    ),
    ToolSpec(
        "payments",
        "charge_by_key",
        f"The charge made with an Idempotency-Key, {NOT_FOUND}.",
        ChargeByKey,
    ),
    ToolSpec(
        "payments",
        "refund",
        "Refund part or all of a charge, idempotent by idempotency_key as charges are;"
        " an amount above what is left is rejected.",
        Refund,
        idempotent=True,
    ),
    ToolSpec(
        "payments",
        "refund_by_key",
        f"The refund made with an Idempotency-Key, {NOT_FOUND}.",
        RefundByKey,
    ),
    ToolSpec(
        "cms",
        "create_post",
        "Create a post. Not idempotent: every call makes a new post, even for an existing"
        " slug; look it up by slug before trying again.",
        CreatePost,
    ),
    ToolSpec(
        "cms",
        "posts_by_slug",
        "The posts with a slug, oldest first; an empty list proves there is none.",
        PostsBySlug,
    ),
    ToolSpec("cms", "get_post", f"A post by id, {NOT_FOUND}.", GetPost),
    ToolSpec(
        "mailer",
        "send",
        "Send an e-mail. Not idempotent, irreversible, and no lookup exists: " + UNKNOWN + ";"
        " escalate, never resend.",
        SendMail,
    ),
    ToolSpec(
        "outbound",
        "send",
        "Send an e-mail carrying your metadata. Not idempotent, irreversible; find it later"
        " with outbound_search by one metadata field.",
        SendOutbound,
    ),
    ToolSpec(
        "outbound",
        "search",
        "Sent messages whose metadata `name` is `value`, newest first, and searched_at (the"
        " provider's clock). Sends show after a lag of up to 1 s: an empty answer proves"
        " absence only for sends made before searched_at - 1.",
        SearchOutbound,
    ),
    ToolSpec(
        "publisher",
        "publish",
        "Publish content under a ref; publishing again is a new publication (the latest"
        " wins). Reads lag publishes.",
        Publish,
    ),
    ToolSpec(
        "publisher",
        "read",
        "The publication of a ref. {found: false, error: not_visible}: not visible yet, ask"
        " again later, never proof of absence; not_found: never published.",
        ReadPublication,
    ),
    ToolSpec(
        "artifacts",
        "put",
        "Store bytes at their sha256 (content-addressed): storing the same bytes again"
        " changes nothing.",
        PutArtifact,
        idempotent=True,
    ),
    ToolSpec(
        "artifacts",
        "get",
        "The bytes at a sha256, with the sha256 of the bytes received: compare it with the"
        f" address before trusting them; {NOT_FOUND}.",
        GetArtifact,
    ),
    ToolSpec(
        "files",
        "put",
        "Write a whole object (S3 PutObject): atomic and checksummed; if_none_match creates"
        " only, if_match replaces only that etag.",
        PutFile,
    ),
    ToolSpec(
        "files",
        "append",
        "Add bytes at the end of an object (S3 Express append): offset must be its size now,"
        " 0 creates it; between appends it is partly written.",
        AppendFile,
    ),
    ToolSpec(
        "files",
        "get",
        "An object's bytes and etag, or {found: false, error: NoSuchKey}.",
        GetFile,
    ),
    ToolSpec(
        "files",
        "delete",
        "Delete an object (S3): status 204 whether or not anything was there, so the answer"
        " proves nothing; if_match deletes only that version.",
        DeleteFile,
    ),
)

BY_NAME = {spec.name: spec for spec in TOOLS}
