"""mailer: not idempotent, irreversible, and with no way to ask what happened.

A sent e-mail cannot be unsent and the mailer offers no lookup, so when its response is lost the
only correct move for an engine is to escalate (``needs_review``), never to send again. The
business key is a fingerprint of recipient and subject: two effects under one key is a duplicate
message in somebody's inbox.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from killpoint.fake_services._service import Reply, RouteTable, Services, bind, parse, read_json
from killpoint.fake_services.faults import Fault
from killpoint.fake_services.journal import RequestRecord, fingerprint
from killpoint.fake_services.models import Message, MessageRequest


def message_key(to: str, subject: str) -> str:
    """The business key of a message: whom it goes to and what it is about."""
    return fingerprint({"to": to, "subject": subject})


async def send(services: Services, request: Request) -> Response:
    state = services.state
    body = await read_json(request)
    parsed = parse(MessageRequest, body)

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if isinstance(parsed, Reply):
            return parsed
        message = Message(
            id=state.next_id("message", "msg"), sent_at=record.time, **parsed.model_dump()
        )
        document = message.model_dump()
        state.insert("message", message.id, document, lookup=record.business_key)
        return Reply(201, document, resource_id=message.id, outcome="applied")

    return await services.handle(
        request,
        service="mailer",
        operation="send",
        business_key=None if isinstance(parsed, Reply) else message_key(parsed.to, parsed.subject),
        body=body,
        work=work,
    )


ROUTES: RouteTable = (("POST", "/mailer/messages", send),)


def routes(services: Services) -> list[Route]:
    return bind(services, ROUTES)
