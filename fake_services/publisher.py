"""publisher: eventually consistent, for verify-before-completion.

A publish succeeds at once but the publication may show up on reads only later: after a lag
drawn per publication from a seeded distribution (`realism.visibility_lag_s`, as an S3 listing
or a search index lags its writes), or as the fault plan says (``withheld_visibility``: after N
reads, after T seconds of the injected clock, or never). An engine that marks a workflow
``completed`` without a verification read that saw the postcondition is caught here.
"""

from __future__ import annotations

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
from killpoint.fake_services.faults import Fault, FaultMode
from killpoint.fake_services.journal import RequestRecord
from killpoint.fake_services.models import Publication, PublicationRequest


def _visibility(fault: Fault | None, seed: str, ordinal: int) -> dict[str, Any] | None:
    """The plan's withheld visibility if it says so, else the seeded lag (None: at once)."""
    if fault is None or fault.mode is not FaultMode.WITHHELD_VISIBILITY:
        lag = realism.visibility_lag_s(realism.ACTIVE, seed, ordinal)
        return {"after_reads": None, "after_s": lag} if lag > 0 else None
    return {"after_reads": fault.params.get("after_reads"), "after_s": fault.params.get("after_s")}


def _visible(stored: dict[str, Any], now: float) -> bool:
    rule = stored["visibility"]
    if rule is None:
        return True
    after_reads, after_s = rule["after_reads"], rule["after_s"]
    if after_reads is not None and stored["reads"] >= after_reads:
        return True
    published_at = stored["publication"]["published_at"]
    return after_s is not None and now >= published_at + float(after_s)


async def publish(services: Services, request: Request) -> Response:
    state = services.state
    body = await read_json(request)
    parsed = parse(PublicationRequest, body)

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if isinstance(parsed, Reply):
            return parsed
        publication = Publication(published_at=record.time, **parsed.model_dump())
        ordinal = state.count("publication") + 1
        resource_id = f"pub_{ordinal:06d}"
        stored = {
            "id": resource_id,
            "publication": publication.model_dump(),
            "visibility": _visibility(fault, services.faults.plan.seed, ordinal),
            "reads": 0,
        }
        state.insert("publication", resource_id, stored, lookup=publication.ref)
        return Reply(201, publication.model_dump(), resource_id=resource_id, outcome="applied")

    return await services.handle(
        request,
        service="publisher",
        operation="publish",
        business_key=None if isinstance(parsed, Reply) else parsed.ref,
        body=body,
        work=work,
    )


async def read(services: Services, request: Request) -> Response:
    state = services.state
    ref = request.path_params["ref"]

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        versions = state.by_lookup("publication", ref)
        if not versions:
            return error(404, "not_found", outcome="not_found", ref=ref)
        latest = versions[-1]
        visible = _visible(latest, services.clock.now())
        state.replace("publication", latest["id"], {**latest, "reads": latest["reads"] + 1})
        if not visible:
            return error(404, "not_visible", outcome="not_visible", ref=ref)
        return Reply(200, latest["publication"])

    return await services.handle(
        request,
        service="publisher",
        operation="read",
        business_key=ref,
        body={"ref": ref},
        work=work,
    )


ROUTES: RouteTable = (
    ("POST", "/publisher/publications", publish),
    ("GET", "/publisher/publications/{ref}", read),
)


def routes(services: Services) -> list[Route]:
    return bind(services, ROUTES)
