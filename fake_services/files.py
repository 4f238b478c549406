"""files: an object store for file writes and deletes, with Amazon S3's rules.

The seed asks file writes to use content hashes and atomic renames, and deletes to verify the
resource state before and after. S3 gives an engine the means, and this fake keeps S3's rules
for each (the S3 User Guide and API reference name them):

- **a PUT is atomic** ("Amazon S3 never adds partial objects"): a reader sees the old object
  or the new one whole. `x-amz-checksum-sha256` (the base64 sha256 of the body) is checked
  before anything is stored: a mismatch is `400 BadDigest`, nothing written.
- **conditional writes** (PutObject `If-None-Match: *`, `If-Match: <etag>`): create only if
  the key is free, replace only the version named; else `412 PreconditionFailed`, and
  `If-Match` on a missing key `404 NoSuchKey`.
- **appends** (S3 Express One Zone's PutObject with `x-amz-write-offset-bytes`, spelled
  `PATCH` here so the journal names it apart from a whole write): the bytes are added at the
  end, the offset must be the object's size (`400 InvalidWriteOffset`; 0 creates it), and the
  object is readable, partly written, between two appends: the one way to tear a file in S3.
- **DELETE answers 204 whether or not anything was there** (DeleteObject), so its answer
  proves nothing; `If-Match: <etag>` or `*` (conditional deletes) removes only that version:
  `412 PreconditionFailed` for another, `404 NoSuchKey` for none.
- **strong read-after-write consistency**: GET sees the latest write at once.

An object's ETag here is the sha256 of its bytes (S3's is an MD5 for a single PUT; one hash
serves both ETag and checksum). Journal: every request is keyed by the object's key; a write's
effect `resource_id` is the ETag of the object it left, a delete's the ETag of the one it
removed, so the oracle can tell a whole write (its object is its body) from an append and a
delete of the run's own version from one of another writer's. The `overwritten` fault has
another client save a newer version just before a delete is served, unjournaled: it is the
world changing under the run, not an effect of the run.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from killpoint.fake_services._service import Reply, RouteTable, Services, bind, error
from killpoint.fake_services.faults import Fault, FaultMode
from killpoint.fake_services.journal import RequestRecord
from killpoint.fake_services.models import FileObject

SERVICE = "files"
KIND = "file"
CHECKSUM = "x-amz-checksum-sha256"
OFFSET = "x-amz-write-offset-bytes"


def etag(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checksum(data: bytes) -> str:
    """S3's `x-amz-checksum-sha256`: the base64 of the body's sha256 digest."""
    return base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")


async def put(services: Services, request: Request) -> Response:
    return await _write(services, request, "put")


async def append(services: Services, request: Request) -> Response:
    return await _write(services, request, "append")


async def _write(services: Services, request: Request, operation: str) -> Response:
    key = request.path_params["key"]
    data = await request.body()
    headers = request.headers

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        sent = headers.get(CHECKSUM)
        if sent is not None and sent != checksum(data):
            return error(400, "BadDigest", message="the sha256 you specified did not match")
        current = _current(services, key)
        refused = _precondition(headers, current)
        if refused is not None:
            return refused
        if operation == "append":
            if not data:
                return error(400, "InvalidRequest", message="an append needs a body")
            size = 0 if current is None else len(current)
            if headers.get(OFFSET) != str(size):
                return error(400, "InvalidWriteOffset", size=size, offset=headers.get(OFFSET))
            data_now = (current or b"") + data
        else:
            data_now = data
        obj = _store(services, key, data_now)
        return Reply(
            200,
            obj.model_dump(),
            resource_id=obj.etag,
            outcome="applied",
            headers=_object_headers(data_now),
        )

    return await services.handle(
        request, service=SERVICE, operation=operation, business_key=key, body=data, work=work
    )


async def get(services: Services, request: Request) -> Response:
    key = request.path_params["key"]

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        current = _current(services, key)
        if current is None:
            return error(404, "NoSuchKey", outcome="not_found", key=key)
        return Reply(
            200,
            content=current,
            media_type="application/octet-stream",
            headers=_object_headers(current),
        )

    return await services.handle(
        request, service=SERVICE, operation="get", business_key=key, body={"key": key}, work=work
    )


async def delete(services: Services, request: Request) -> Response:
    key = request.path_params["key"]
    headers = request.headers

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        _other_writer(services, key, fault)
        current = _current(services, key)
        refused = _precondition(headers, current)
        if refused is not None:
            return refused
        if current is None:
            return Reply(204, content=b"")  # nothing there, and S3 says 204 all the same
        services.state.delete(KIND, key)
        return Reply(204, content=b"", resource_id=etag(current), outcome="applied")

    return await services.handle(
        request,
        service=SERVICE,
        operation="delete",
        business_key=key,
        body={"key": key},
        work=work,
    )


def _precondition(headers: Any, current: bytes | None) -> Reply | None:
    """S3's conditional request headers against the object now at the key."""
    if headers.get("if-none-match") == "*" and current is not None:
        return error(412, "PreconditionFailed", condition="If-None-Match")
    wanted = headers.get("if-match")
    if wanted is None:
        return None
    if current is None:
        return error(404, "NoSuchKey", outcome="not_found")
    if wanted.strip('"') not in ("*", etag(current)):
        return error(412, "PreconditionFailed", condition="If-Match", etag=etag(current))
    return None


def _current(services: Services, key: str) -> bytes | None:
    stored = services.state.get(KIND, key)
    return None if stored is None else base64.b64decode(stored["data"])


def _store(services: Services, key: str, data: bytes) -> FileObject:
    obj = FileObject(key=key, etag=etag(data), size=len(data))
    document = {**obj.model_dump(), "data": base64.b64encode(data).decode("ascii")}
    if services.state.get(KIND, key) is None:
        services.state.insert(KIND, key, document)
    else:
        services.state.replace(KIND, key, document)
    return obj


def _other_writer(services: Services, key: str, fault: Fault | None) -> None:
    """The `overwritten` fault: another client saves its version first (not the run's effect)."""
    if fault is not None and fault.mode is FaultMode.OVERWRITTEN:
        _store(services, key, f"{key}: saved by another writer\n".encode())


def _object_headers(data: bytes) -> dict[str, str]:
    return {"ETag": f'"{etag(data)}"', CHECKSUM: checksum(data)}


ROUTES: RouteTable = (
    ("PUT", "/files/{key:path}", put),
    ("PATCH", "/files/{key:path}", append),
    ("GET", "/files/{key:path}", get),
    ("DELETE", "/files/{key:path}", delete),
)


def routes(services: Services) -> list[Route]:
    return bind(services, ROUTES)
