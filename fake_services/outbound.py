"""outbound: an e-mail provider with no idempotency, whose sent messages can be searched.

Like the mailer it has no `Idempotency-Key` and a sent message cannot be unsent. Unlike it, it
imitates what real providers offer in place of keys: the sender attaches metadata of its own to
a message and searches its sent messages by it, which is how an engine with a local outbox
proves, after a lost response, whether its message went out. Each rule names its model:

- **metadata** (Postmark's `Metadata` on `POST /email`): name/value strings kept with the
  message, never shown to the recipient; one name twice, even in another case, is refused
  (422). SendGrid's `custom_args` and Mailgun's `v:` user variables are the same idea.
- **search by one metadata field** (Postmark's `GET /messages/outbound?metadata_<name>=<value>`,
  "you can currently only search by a single metadata field at a time"): zero or two filters
  are refused (422); the answer is `{"total_count", "messages"}`, newest first.
- **the search lags the sends** (Mailgun's events API: events "follow different routes to the
  event storage", so a page is "trustworthy" only once it is older than a threshold age): a
  message shows in the search only after a lag drawn per message (`realism.search_lag_s`), at
  most `realism.SEARCH_WINDOW_S`. An empty answer proves absence only for sends older than
  the window; the answer's `Date` header is the provider's clock, the searcher's measure of it.
"""

from __future__ import annotations

from email.utils import formatdate
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from killpoint.fake_services import realism
from killpoint.fake_services._service import (
    Reply,
    RouteTable,
    Services,
    bind,
    error,
    parse,
    read_json,
)
from killpoint.fake_services.faults import Fault
from killpoint.fake_services.journal import RequestRecord
from killpoint.fake_services.mailer import message_key
from killpoint.fake_services.models import OutboundMessage, OutboundRequest

KIND = "outbound"
FILTER = "metadata_"  # a search parameter `metadata_<name>=<value>`


async def send(services: Services, request: Request) -> Response:
    state = services.state
    body = await read_json(request)
    parsed = parse(OutboundRequest, body)

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if isinstance(parsed, Reply):
            return parsed
        ordinal = state.count(KIND) + 1
        message = OutboundMessage(
            id=f"out_{ordinal:06d}", sent_at=record.time, **parsed.model_dump()
        )
        lag = realism.search_lag_s(realism.ACTIVE, services.faults.plan.seed, ordinal)
        stored = {"message": message.model_dump(), "indexed_at": record.time + lag}
        state.insert(KIND, message.id, stored)
        return Reply(201, message.model_dump(), resource_id=message.id, outcome="applied")

    return await services.handle(
        request,
        service=KIND,
        operation="send",
        business_key=None if isinstance(parsed, Reply) else message_key(parsed.to, parsed.subject),
        body=body,
        work=work,
    )


async def search(services: Services, request: Request) -> Response:
    filters = {
        name.removeprefix(FILTER): value
        for name, value in request.query_params.items()
        if name.startswith(FILTER)
    }

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if len(filters) != 1:
            return error(
                422, "invalid_request", message="search by exactly one metadata_<name> field"
            )
        ((name, value),) = filters.items()
        now = services.clock.now()
        found = [
            stored["message"]
            for stored in services.state.all(KIND)
            if stored["indexed_at"] <= now and _metadata(stored).get(name) == value
        ]
        found.reverse()  # newest first, as Postmark lists them
        date = {"Date": formatdate(now, usegmt=True)}
        answer = {"total_count": len(found), "messages": found}
        if not found:
            return Reply(200, answer, outcome="not_found", headers=date)
        return Reply(200, answer, headers=date, business_key=_key(found[0]))

    return await services.handle(
        request,
        service=KIND,
        operation="search",
        business_key=None,
        body={"metadata": filters},
        work=work,
    )


def _metadata(stored: dict[str, Any]) -> dict[str, str]:
    metadata: dict[str, str] = stored["message"]["metadata"]
    return metadata


def _key(message: dict[str, Any]) -> str:
    return message_key(str(message["to"]), str(message["subject"]))


ROUTES: RouteTable = (
    ("POST", "/outbound/messages", send),
    ("GET", "/outbound/messages", search),
)


def routes(services: Services) -> list[Route]:
    return bind(services, ROUTES)
