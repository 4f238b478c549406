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

from killpoint.harness.contract.boundaries import READ_RETURNED, RESPONSE_RECEIVED


class BoundaryTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, hit: Callable[[str], None]) -> None:
        self.inner = inner
        self.hit = hit

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if not request.url.path.startswith("/_admin"):
            self.hit(READ_RETURNED if request.method == "GET" else RESPONSE_RECEIVED)
        return response

    def close(self) -> None:
        self.inner.close()
