"""The tools: one per service operation, each its arguments and its rule in a sentence.

An agent that reaches the fake services through MCP must meet the same world as one that calls
HTTP: the same rules (a key only where the real API takes one, a lookup only where the service
answers one: none for the mailer) and the same journal. So a tool is a service operation of
``faults.OPERATIONS``, named ``<service>_<operation>``, whose arguments (``arguments.py``) make
the one request that operation is; its description says the rule an agent has to know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.types import Tool, ToolAnnotations
from pydantic import BaseModel

from killpoint.fake_services.faults import OPERATIONS
from killpoint.fake_services.mcp.arguments import (
    AppendFile,
    ChargeByKey,
    ChargesByOrder,
    CreateCharge,
    CreatePost,
    DeleteFile,
    GetArtifact,
    GetFile,
    GetPost,
    PostsBySlug,
    Publish,
    PutArtifact,
    PutFile,
    ReadPublication,
    Refund,
    RefundByKey,
    SearchOutbound,
    SendMail,
    SendOutbound,
    ToolArgs,
)

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
