"""The resources and request bodies of the fake services, shared by servers and clients.

Pydantic because these cross a process boundary (JSON over HTTP); one definition on both sides
means the HTTP contract in README.md and the typed clients cannot drift apart.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

_SHA256 = r"^[0-9a-f]{64}$"


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Resource(BaseModel):
    model_config = ConfigDict(frozen=True)


class ChargeRequest(_Body):
    order_id: str = Field(min_length=1)
    amount_cents: int = Field(gt=0)
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    customer: str | None = None  # Stripe's `customer`: whose charge it is; order ids are not


class RefundRequest(_Body):
    charge_id: str = Field(min_length=1)
    amount_cents: int = Field(gt=0)


class PostRequest(_Body):
    slug: str = Field(min_length=1)
    title: str
    body: str
    image_sha256: str | None = Field(default=None, pattern=_SHA256)


class MessageRequest(_Body):
    to: str = Field(min_length=1)
    subject: str
    body: str


class OutboundRequest(MessageRequest):
    # Postmark's `Metadata`: the sender's own name/value pairs, kept with the message and
    # searchable; one name twice, even in another case, is refused
    metadata: dict[str, str] = Field(default_factory=dict)

    @field_validator("metadata")
    @classmethod
    def _names_unique_ignoring_case(cls, value: dict[str, str]) -> dict[str, str]:
        if len({name.lower() for name in value}) != len(value):
            raise ValueError("metadata names must be unique, ignoring case")
        return value


class PublicationRequest(_Body):
    ref: str = Field(min_length=1)
    content: str


class Charge(_Resource):
    id: str
    order_id: str
    amount_cents: int
    currency: str
    status: str
    idempotency_key: str | None
    created_at: float
    customer: str | None = None


class Refund(_Resource):
    id: str
    charge_id: str
    amount_cents: int
    status: str
    idempotency_key: str | None
    created_at: float


class Post(_Resource):
    id: str
    slug: str
    title: str
    body: str
    image_sha256: str | None
    created_at: float


class Message(_Resource):
    id: str
    to: str
    subject: str
    body: str
    sent_at: float


class OutboundMessage(Message):
    metadata: dict[str, str]


class FileObject(_Resource):
    """What a write to the files store answers: the object it left at the key."""

    key: str
    etag: str  # the sha256 of the object's bytes (S3's ETag is an MD5; one hash serves here)
    size: int


class Publication(_Resource):
    ref: str
    content: str
    published_at: float
