"""The in-process tier: a sync ``httpx.Client`` that drives the ASGI app directly.

Exhaustive boundary enumeration and Hypothesis make thousands of calls, so a call must cost well
under a millisecond and stay deterministic: no sockets, no threads, no new client per request.
``httpx.ASGITransport`` is async-only and Starlette's ``TestClient`` hops to a thread per call,
so :class:`AsgiBridge` runs the app's coroutine on one private event loop instead. Network
faults are injected by a respx route whose side effect decides the fault and forwards to the
bridge, exactly as the real tier's transport does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import respx
from starlette.types import ASGIApp, Message

from killpoint.fake_services._network import deliver
from killpoint.fake_services.app import build_app
from killpoint.fake_services.clock import ServiceClock
from killpoint.fake_services.faults import FaultInjector, FaultPlan, classify
from killpoint.fake_services.journal import Journal

BASE_URL = "http://services.test"


class AsgiBridge:
    """Call an ASGI app synchronously, one request at a time, on a persistent event loop."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._loop = asyncio.new_event_loop()
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
            status, headers, content = self._run(self._call(scope, body))
        return httpx.Response(status, headers=headers, content=content, request=request)

    def _run(
        self, call: Coroutine[Any, Any, tuple[int, list[tuple[bytes, bytes]], bytes]]
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Run on the bridge's own loop; from a thread whose loop is running (an async agent
        calling a synchronous client), on a thread of its own, as a blocking call would."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._loop.run_until_complete(call)
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(self._loop.run_until_complete, call).result()

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

    def close(self) -> None:
        self._loop.close()


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
        self.router = respx.MockRouter(
            assert_all_called=False, assert_all_mocked=True, base_url=BASE_URL
        )
        self.router.route(name="services").mock(side_effect=self._network)

    @property
    def base_url(self) -> str:
        return BASE_URL

    def _network(self, request: httpx.Request) -> httpx.Response:
        target = classify(request.method, request.url.path)
        fault = self.faults.decide(*target) if target is not None else None
        return deliver(request, fault, self._bridge.send, sleeps=False)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        try:
            return self.router.handler(request)
        finally:
            self.router.reset()  # respx records every call; a campaign makes thousands

    def transport(self, *, faults: bool = True) -> httpx.BaseTransport:
        """The in-process transport, for callers that wrap it (to observe each response);
        `faults=False`: one the fault plan never meets and whose requests no rule counts."""
        if not faults:
            return httpx.MockTransport(self._unplanned)
        return httpx.MockTransport(self._handle)

    def _unplanned(self, request: httpx.Request) -> httpx.Response:
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
        self._bridge.close()
        self.journal.close()

    def __enter__(self) -> InProcessServices:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
