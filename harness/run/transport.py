"""Boundaries observed at the HTTP transport, where any engine can be watched from outside.

After a mutating request returns from the service and before the engine reads the response is
the lost-response window (DESIGN boundary 5): the service has committed, the worker has not yet
learned it. After a read returns is where a check-then-act engine decides to write: two workers
that both read "absent" there both write. Wrapping the transport puts a boundary at each, for
our engine and for engines we cannot instrument alike, so a crash or a switch between two
workers lands there without anyone placing a hook.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from killpoint.contract.boundaries import READ_RETURNED, RESPONSE_RECEIVED
from killpoint.fake_services.faults import ORIGIN_HEADER


class BoundaryTransport(httpx.BaseTransport):
    """`origin`, when given, goes on every request (`ORIGIN_HEADER`): which tenant and workflow
    sent it, as the harness knows, for the services to journal (`harness.run.neighbours`)."""

    def __init__(
        self, inner: httpx.BaseTransport, hit: Callable[[str], None], origin: str | None = None
    ) -> None:
        self.inner = inner
        self.hit = hit
        self.origin = origin

    def signed(self, origin: str) -> BoundaryTransport:
        """This transport, putting `origin` on every request."""
        self.origin = origin
        return self

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.origin is not None:
            request.headers[ORIGIN_HEADER] = self.origin
        response = self.inner.handle_request(request)
        if not request.url.path.startswith("/_admin"):
            self.hit(READ_RETURNED if request.method == "GET" else RESPONSE_RECEIVED)
        return response

    def close(self) -> None:
        self.inner.close()
