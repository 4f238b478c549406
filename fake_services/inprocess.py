"""The in-process tier: a sync ``httpx.Client`` that drives the ASGI app directly.

Exhaustive boundary enumeration and Hypothesis make thousands of calls, so a call must cost well
under a millisecond and stay deterministic: no sockets, no threads, no new client per request.
``httpx.ASGITransport`` is async-only and Starlette's ``TestClient`` hops to a thread per call.
The app never waits on anything (`app.py`: every endpoint does its local SQLite work inline), so
:class:`AsgiBridge` steps the app's coroutine by hand, with no event loop at all: a loop's turn
per request (a task, a selector poll) cost as much as the app's own work. Network faults are
decided in the transport, which forwards to the bridge, exactly as the real tier's does.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar, cast

import httpx
from starlette.types import ASGIApp, Message

from killpoint.fake_services._network import deliver
from killpoint.fake_services.app import build_app
from killpoint.fake_services.clock import ServiceClock
from killpoint.fake_services.faults import FaultInjector, FaultPlan, classify
from killpoint.fake_services.journal import Journal

HOST = "services.test"
BASE_URL = f"http://{HOST}"
T = TypeVar("T")


class AsgiBridge:
    """Call an ASGI app synchronously, one request at a time, stepping its coroutine."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._lock = threading.Lock()

    def send(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        url = request.url
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?")[0],
            "query_string": url.query,
            "root_path": "",
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "server": (url.host, url.port or 80),
            "client": ("127.0.0.1", 0),
        }
        with self._lock:
            status, headers, content = contextvars.copy_context().run(
                _complete, self._call(scope, body)
            )
        return httpx.Response(status, headers=headers, content=content, request=request)

    async def _call(
        self, scope: dict[str, Any], body: bytes
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        received = False
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def receive() -> Message:
            nonlocal received
            if received:
                return {"type": "http.disconnect"}
            received = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return int(start["status"]), list(start.get("headers", [])), b"".join(chunks)


def _complete(call: Coroutine[Any, Any, T]) -> T:
    """Run `call` to its end on this thread, as a task would (in a copy of the context), but
    without a loop: a bare ``yield`` (``asyncio.sleep(0)``) is resumed at once; waiting on a
    future would need a loop the in-process app must never need, so it is an error."""
    try:
        while True:
            if call.send(None) is not None:
                raise RuntimeError("an in-process fake service waited on a future; it must not")
    except StopIteration as done:
        return cast(T, done.value)
    finally:
        call.close()


class InProcessServices:
    """All fake services in this process, with their journal, clock and fault plan."""

    def __init__(
        self,
        journal_path: str | Path | None = None,
        plan: FaultPlan | None = None,
        clock: ServiceClock | None = None,
    ) -> None:
        self.journal = Journal.open(journal_path) if journal_path else Journal.memory()
        self.clock = clock or ServiceClock()
        self.faults = FaultInjector(plan)
        self.app = build_app(self.journal, self.faults, self.clock)
        self._bridge = AsgiBridge(self.app)

    @property
    def base_url(self) -> str:
        return BASE_URL

    def _network(self, request: httpx.Request) -> httpx.Response:
        _served_here(request)
        target = classify(request.method, request.url.path)
        fault = self.faults.decide(*target) if target is not None else None
        return deliver(request, fault, self._bridge.send, sleeps=False)

    def transport(self, *, faults: bool = True) -> httpx.BaseTransport:
        """The in-process transport, for callers that wrap it (to observe each response);
        `faults=False`: one the fault plan never meets and whose requests no rule counts."""
        if not faults:
            return httpx.MockTransport(self._unplanned)
        return httpx.MockTransport(self._network)

    def _unplanned(self, request: httpx.Request) -> httpx.Response:
        _served_here(request)
        return deliver(request, None, self._bridge.send, sleeps=False)

    def client(self, timeout: float = 5.0) -> httpx.Client:
        """A client to keep and reuse; each call goes through the fault plan."""
        return httpx.Client(base_url=BASE_URL, transport=self.transport(), timeout=timeout)

    def set_plan(self, plan: FaultPlan) -> None:
        """Install a fault plan; its occurrence counters start from zero."""
        self.faults.set_plan(plan)

    def reset(self) -> None:
        """Forget all ground truth and state, and clear the fault plan (the clock stays)."""
        self.journal.db.clear()
        self.faults.set_plan(FaultPlan())

    def close(self) -> None:
        self.journal.close()

    def __enter__(self) -> InProcessServices:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _served_here(request: httpx.Request) -> None:
    """Only the services' own address is served in process; any other is no host at all."""
    if request.url.host != HOST:
        raise httpx.ConnectError(f"no fake service at {request.url.host}", request=request)
