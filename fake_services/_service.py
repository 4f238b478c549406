"""The request pipeline every fake service endpoint runs through.

Putting it in one place is what makes the ground truth trustworthy: each delivery is journaled
on arrival (committed before any work), the state change and its ``effects`` row commit in one
transaction, the outcome is written before the response leaves, and the server-side fault modes
(timeout/error before commit, error after commit, a really slow reply) cut in at the same points
for every service. The service modules only say what their operation does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from killpoint.fake_services._state import StateStore
from killpoint.fake_services.clock import ServiceClock
from killpoint.fake_services.faults import (
    DROP_HEADER,
    FAULT_HEADER,
    ORIGIN_HEADER,
    Fault,
    FaultInjector,
    FaultMode,
)
from killpoint.fake_services.journal import Journal, RequestRecord, fingerprint, journaled_body

BodyT = TypeVar("BodyT", bound=BaseModel)


@dataclass(frozen=True)
class Reply:
    """What an operation did: the response to send and, if state changed, the resource id."""

    status: int
    body: Any = None
    resource_id: str | None = None
    outcome: str = "ok"
    content: bytes | None = None
    media_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # a read names what it read only once it has found it (a post by id, a charge by key)
    business_key: str | None = None

    def response(self) -> Response:
        if self.content is not None:
            return Response(self.content, self.status, self.headers, self.media_type)
        return JSONResponse(self.body, self.status, self.headers)


def error(status: int, code: str, outcome: str = "rejected", **detail: Any) -> Reply:
    return Reply(status, {"error": code, **detail}, outcome=outcome)


Work = Callable[[RequestRecord, Fault | None], Reply]


@dataclass
class Services:
    """What every endpoint needs: the journal, the state, the fault decision and the clock."""

    journal: Journal
    faults: FaultInjector
    clock: ServiceClock

    def __post_init__(self) -> None:
        self.state = StateStore(self.journal.db)

    def fault_for(self, request: Request, service: str, operation: str) -> Fault | None:
        header = request.headers.get(FAULT_HEADER)
        if header is not None:  # decided by the caller's transport, counters already moved
            return Fault.decode(header)
        fault = self.faults.decide(service, operation)
        # A bare client: network-side modes need a transport; only `slow` can be done here.
        if fault is not None and fault.network_side and fault.mode is not FaultMode.SLOW:
            return None
        return fault

    async def handle(
        self,
        request: Request,
        *,
        service: str,
        operation: str,
        business_key: str | None,
        body: Any,
        work: Work,
    ) -> Response:
        fault = self.fault_for(request, service, operation)
        record = self.journal.record_request(
            service,
            operation,
            idempotency_key=request.headers.get("idempotency-key"),
            business_key=business_key,
            fingerprint=fingerprint(body),
            time=self.clock.now(),
            body=journaled_body(body),
            origin=request.headers.get(ORIGIN_HEADER),
        )
        mode = fault.mode if fault is not None else None
        if mode is FaultMode.TIMEOUT_BEFORE_COMMIT:
            self.journal.set_outcome(record.seq, mode.value)
            return JSONResponse({"error": "timeout"}, 504, {DROP_HEADER: "1"})
        if mode is FaultMode.ERROR_BEFORE_COMMIT:
            self.journal.set_outcome(record.seq, mode.value)
            return JSONResponse({"error": "unavailable"}, 503)
        with self.journal.db.transaction():
            reply = work(record, fault)
            if reply.resource_id is not None:
                self.journal.apply_effect(record, reply.resource_id)
            failed_after = mode is FaultMode.ERROR_AFTER_COMMIT
            self.journal.set_outcome(
                record.seq, "error_after_commit" if failed_after else reply.outcome
            )
            if reply.business_key is not None and record.business_key is None:
                self.journal.set_business_key(record.seq, reply.business_key)
        if mode is FaultMode.SLOW and fault is not None and fault.params.get("sleep", True):
            await asyncio.sleep(float(fault.params["delay_s"]))
        if mode is FaultMode.ERROR_AFTER_COMMIT:
            return JSONResponse({"error": "internal"}, 500)
        return reply.response()


async def read_json(request: Request) -> Any:
    """The parsed JSON body, or the raw bytes when it is not JSON (fingerprinted as is)."""
    raw = await request.body()
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def parse(model: type[BodyT], body: Any) -> BodyT | Reply:
    """Validate a body, or the 422 reply that rejects it."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        details = exc.errors(include_url=False, include_context=False, include_input=False)
        return error(422, "invalid_request", detail=details)


# One endpoint of a service: the handler gets the services it runs against with each request.
Handler = Callable[[Services, Request], Awaitable[Response]]
# A service's HTTP contract as a table: (method, path, handler) rows, in matching order.
RouteTable = Sequence[tuple[str, str, Handler]]


def bind(services: Services, table: RouteTable) -> list[Route]:
    """The Starlette routes of a table, each handler bound to `services`."""

    def endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def call(request: Request) -> Response:
            return await handler(services, request)

        return call

    return [
        Route(path, endpoint(handler), methods=[method], name=handler.__name__)
        for method, path, handler in table
    ]
