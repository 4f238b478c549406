"""``/_admin``: the harness's side door into a running set of fake services.

In the real tier the services live in another process, so reading the ground truth, moving the
injected clock, installing a fault plan and asking for a fault decision all go over HTTP. Admin
requests are not journaled and never faulted: they are the observer, not the observed.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from killpoint.fake_services._service import RouteTable, Services, bind
from killpoint.fake_services.faults import FaultPlan


def _bad(message: str) -> JSONResponse:
    return JSONResponse({"error": "invalid_request", "message": message}, 422)


async def _number(request: Request, field: str) -> float | JSONResponse:
    try:
        payload: Any = await request.json()
        return float(payload[field])
    except (ValueError, KeyError, TypeError):
        return _bad(f"expected a JSON object with a number {field!r}")


async def health(services: Services, request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def requests(services: Services, request: Request) -> Response:
    journal = services.journal
    after = request.query_params.get("after")
    service = request.query_params.get("service")
    records = journal.requests_after(float(after)) if after else journal.requests(service)
    if after and service:
        records = [r for r in records if r.service == service]
    return JSONResponse({"requests": [r.to_json() for r in records]})


async def effects(services: Services, request: Request) -> Response:
    params = request.query_params
    records = services.journal.applied_effects(params.get("service"), params.get("business_key"))
    return JSONResponse({"effects": [r.to_json() for r in records]})


async def get_clock(services: Services, request: Request) -> Response:
    return JSONResponse({"now": services.clock.now()})


async def set_clock(services: Services, request: Request) -> Response:
    now = await _number(request, "now")
    if isinstance(now, Response):
        return now
    services.clock.set(now)
    return JSONResponse({"now": services.clock.now()})


async def advance_clock(services: Services, request: Request) -> Response:
    dt = await _number(request, "dt")
    if isinstance(dt, Response):
        return dt
    if dt < 0:
        return _bad("the clock only moves forward")
    return JSONResponse({"now": services.clock.advance(dt)})


async def get_faults(services: Services, request: Request) -> Response:
    faults = services.faults
    return JSONResponse({"plan": faults.plan.model_dump(mode="json"), "counts": faults.counts()})


async def set_faults(services: Services, request: Request) -> Response:
    try:
        plan = FaultPlan.model_validate_json(await request.body())
    except ValidationError as exc:
        return _bad(str(exc))
    services.faults.set_plan(plan)
    counts = services.faults.counts()
    return JSONResponse({"plan": plan.model_dump(mode="json"), "counts": counts})


async def decide(services: Services, request: Request) -> Response:
    try:
        payload: Any = await request.json()
        service, operation = str(payload["service"]), str(payload["operation"])
    except (ValueError, KeyError, TypeError):
        return _bad("expected {service, operation}")
    fault = services.faults.decide(service, operation)
    return JSONResponse({"fault": None if fault is None else fault.model_dump(mode="json")})


async def reset(services: Services, request: Request) -> Response:
    services.journal.db.clear()
    services.faults.set_plan(FaultPlan())
    return JSONResponse({"status": "reset"})


ROUTES: RouteTable = (
    ("GET", "/_admin/health", health),
    ("GET", "/_admin/journal/requests", requests),
    ("GET", "/_admin/journal/effects", effects),
    ("GET", "/_admin/clock", get_clock),
    ("PUT", "/_admin/clock", set_clock),
    ("POST", "/_admin/clock/advance", advance_clock),
    ("GET", "/_admin/faults", get_faults),
    ("PUT", "/_admin/faults", set_faults),
    ("POST", "/_admin/faults/decide", decide),
    ("POST", "/_admin/reset", reset),
)


def routes(services: Services) -> list[Route]:
    return bind(services, ROUTES)
