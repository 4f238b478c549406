"""artifacts: a content-addressed store for the results of expensive steps.

An object lives at its sha256, so a re-upload of the same bytes is a no-op and an upload whose
bytes do not match the address is refused. The fault plan can serve an object corrupted (bytes
whose hash differs) or missing (404), so an engine that resumes from a saved artifact without
checking it is caught acting on tampered or lost state.
"""

from __future__ import annotations

import hashlib
import re

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from killpoint.fake_services._service import Reply, RouteTable, Services, bind, error
from killpoint.fake_services.faults import Fault, FaultMode
from killpoint.fake_services.journal import RequestRecord

_SHA256 = re.compile(r"[0-9a-f]{64}")


def corrupt(data: bytes) -> bytes:
    """Deterministically damage bytes so that their sha256 changes."""
    return bytes([data[0] ^ 0xFF]) + data[1:] if data else b"\x00"


async def put(services: Services, request: Request) -> Response:
    state = services.state
    address = request.path_params["sha256"]
    data = await request.body()
    media_type = request.headers.get("content-type", "application/octet-stream")

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        actual = hashlib.sha256(data).hexdigest()
        if actual != address:
            return error(422, "hash_mismatch", expected=address, actual=actual)
        summary = {"sha256": address, "size": len(data), "media_type": media_type}
        if not state.put_blob(address, data, media_type):
            return Reply(200, summary, outcome="exists")
        return Reply(201, summary, resource_id=address, outcome="applied")

    return await services.handle(
        request,
        service="artifacts",
        operation="put",
        business_key=address,
        body=data,
        work=work,
    )


async def get(services: Services, request: Request) -> Response:
    state = services.state
    address = request.path_params["sha256"]

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if not _SHA256.fullmatch(address):
            return error(422, "invalid_request", message="the address is not a sha256 hex")
        mode = fault.mode if fault is not None else None
        stored = state.get_blob(address)
        if stored is None or mode is FaultMode.MISSING_ARTIFACT:
            outcome = "not_found" if stored is None else "missing_artifact"
            return error(404, "not_found", outcome=outcome, sha256=address)
        data, media_type = stored
        if mode is FaultMode.CORRUPT_ARTIFACT:
            return Reply(200, content=corrupt(data), media_type=media_type, outcome=mode.value)
        return Reply(200, content=data, media_type=media_type)

    return await services.handle(
        request,
        service="artifacts",
        operation="get",
        business_key=address,
        body={"sha256": address},
        work=work,
    )


ROUTES: RouteTable = (
    ("PUT", "/artifacts/{sha256}", put),
    ("GET", "/artifacts/{sha256}", get),
)


def routes(services: Services) -> list[Route]:
    return bind(services, ROUTES)
