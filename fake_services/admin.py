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

from killpoint.fake_services._service import Services
from killpoint.fake_services.faults import FaultPlan


def _bad(message: str) -> JSONResponse:
    return JSONResponse({"error": "invalid_request", "message": message}, 422)


async def _number(request: Request, field: str) -> float | JSONResponse:
    try:
        payload: Any = await request.json()
        return float(payload[field])
    except (ValueError, KeyError, TypeError):
        return _bad(f"expected a JSON object with a number {field!r}")


def routes(services: Services) -> list[Route]:
    journal, clock, faults = services.journal, services.clock, services.faults

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def requests(request: Request) -> Response:
        after = request.query_params.get("after")
        service = request.query_params.get("service")
        records = journal.requests_after(float(after)) if after else journal.requests(service)
        if after and service:
            records = [r for r in records if r.service == service]
        return JSONResponse({"requests": [r.to_json() for r in records]})

    async def effects(request: Request) -> Response:
        params = request.query_params
        records = journal.applied_effects(params.get("service"), params.get("business_key"))
        return JSONResponse({"effects": [r.to_json() for r in records]})

    async def get_clock(request: Request) -> Response:
        return JSONResponse({"now": clock.now()})

    async def set_clock(request: Request) -> Response:
        now = await _number(request, "now")
        if isinstance(now, Response):
            return now
        clock.set(now)
        return JSONResponse({"now": clock.now()})

    async def advance_clock(request: Request) -> Response:
        dt = await _number(request, "dt")
        if isinstance(dt, Response):
            return dt
        if dt < 0:
            return _bad("the clock only moves forward")
        return JSONResponse({"now": clock.advance(dt)})

    async def get_faults(request: Request) -> Response:
        return JSONResponse(
            {"plan": faults.plan.model_dump(mode="json"), "counts": faults.counts()}
        )

    async def set_faults(request: Request) -> Response:
        try:
            plan = FaultPlan.model_validate_json(await request.body())
        except ValidationError as exc:
            return _bad(str(exc))
        faults.set_plan(plan)
        return JSONResponse({"plan": plan.model_dump(mode="json"), "counts": faults.counts()})

    async def decide(request: Request) -> Response:
        try:
            payload: Any = await request.json()
            service, operation = str(payload["service"]), str(payload["operation"])
        except (ValueError, KeyError, TypeError):
            return _bad("expected {service, operation}")
        fault = faults.decide(service, operation)
        return JSONResponse({"fault": None if fault is None else fault.model_dump(mode="json")})

    async def reset(request: Request) -> Response:
        journal.db.clear()
        faults.set_plan(FaultPlan())
        return JSONResponse({"status": "reset"})

    return [
        Route("/_admin/health", health, methods=["GET"]),
        Route("/_admin/journal/requests", requests, methods=["GET"]),
        Route("/_admin/journal/effects", effects, methods=["GET"]),
        Route("/_admin/clock", get_clock, methods=["GET"]),
        Route("/_admin/clock", set_clock, methods=["PUT"]),
        Route("/_admin/clock/advance", advance_clock, methods=["POST"]),
        Route("/_admin/faults", get_faults, methods=["GET"]),
        Route("/_admin/faults", set_faults, methods=["PUT"]),
        Route("/_admin/faults/decide", decide, methods=["POST"]),
        Route("/_admin/reset", reset, methods=["POST"]),
    ]
