"""Boundaries observed at the HTTP transport, where any engine can be watched from outside.

After a mutating request returns from the service and before the engine reads the response is
the lost-response window (DESIGN boundary 5): the service has committed, the worker has not yet
learned it. Wrapping the transport puts a boundary there for our engine and for engines we
cannot instrument alike.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from killpoint.harness.contract.boundaries import RESPONSE_RECEIVED


class BoundaryTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, hit: Callable[[str], None]) -> None:
        self.inner = inner
        self.hit = hit

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "GET" and not request.url.path.startswith("/_admin"):
            self.hit(RESPONSE_RECEIVED)
        return response

    def close(self) -> None:
        self.inner.close()
