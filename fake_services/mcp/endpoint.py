"""Streamable HTTP on loopback: one MCP server per process, one URL per services base URL.

The harness runs workers side by side, each on its own services, and SIGKILLs and restarts
agent processes; so one uvicorn server in a daemon thread serves every endpoint, each a
``/<token>/mcp`` path that names its services, and sessions are stateless: a restarted agent
makes a fresh client and nothing of the killed one is left to expire. Threads do not survive
``fork``, so the shared server is kept per process id: a forked child gets one of its own.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httpx
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from killpoint.fake_services.mcp.forward import Forwarder
from killpoint.fake_services.mcp.server import Context, build_server

HOST = "127.0.0.1"


class McpEndpoint:
    """A loopback MCP server (started on first use) handing out one URL per services URL."""

    def __init__(self, *, startup_timeout: float = 10.0) -> None:
        self.startup_timeout = startup_timeout
        self._lock = threading.Lock()
        self._forwarders: dict[str, Forwarder] = {}
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._pid: int | None = None
        self.port: int | None = None

    def open(
        self,
        services_url: str,
        transport: httpx.BaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float = 5.0,
    ) -> str:
        """A new URL whose tool calls go to ``services_url`` through ``transport`` (a plain
        loopback one if None; the endpoint closes it with the URL), with ``headers`` added."""
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._start()
            self._forwarders[token] = Forwarder(services_url, transport, headers, timeout)
        return f"http://{HOST}:{self.port}/{token}/mcp"

    def close_url(self, url: str) -> None:
        """Forget an endpoint: its URL answers 404 from now on."""
        token = httpx.URL(url).path.strip("/").split("/")[0]
        with self._lock:
            forwarder = self._forwarders.pop(token, None)
        if forwarder is not None:
            forwarder.close()

    def close(self) -> None:
        """Stop the server and forget every endpoint."""
        with self._lock:
            server, thread, forwarders = self._server, self._thread, self._forwarders
            self._server, self._thread, self._forwarders = None, None, {}
            ours = self._pid == os.getpid()
        if not ours:
            return  # a fork's copy: the thread is the parent's, and so are the connections
        if server is not None and thread is not None:
            server.should_exit = True
            thread.join(self.startup_timeout)
        for forwarder in forwarders.values():
            forwarder.close()

    def __enter__(self) -> McpEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving ---------------------------------------------------------------------------

    def _start(self) -> None:
        """Start the server unless this process runs it (the caller holds the lock)."""
        if self._pid == os.getpid() and self._thread is not None and self._thread.is_alive():
            return
        if self._pid != os.getpid():
            self._forwarders = {}  # a fork's copy: its clients' connections are the parent's
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((HOST, 0))
        # log_config=None: the process is the harness's, its logging is not ours to configure
        config = uvicorn.Config(
            self._app(),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",  # the SDK's session manager runs in it: no lifespan, no server
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="killpoint-mcp", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + self.startup_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                sock.close()
                raise RuntimeError("the MCP endpoint's server did not start")
            time.sleep(0.005)
        self._server, self._thread, self._pid = server, thread, os.getpid()
        self.port = sock.getsockname()[1]

    def _app(self) -> Starlette:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{HOST}:*"],
            allowed_origins=[f"http://{HOST}:*"],
        )
        manager = StreamableHTTPSessionManager(
            app=build_server(self._resolve),
            stateless=True,
            json_response=True,
            security_settings=security,
        )

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with manager.run():
                yield

        gate = _Gate(lambda token: token in self._forwarders, manager)
        route = Route("/{token}/mcp", gate, methods=["GET", "POST", "DELETE"])
        return Starlette(routes=[route], lifespan=lifespan)

    def _resolve(self, ctx: Context) -> Forwarder:
        request: Any = ctx.request
        token = request.path_params["token"] if request is not None else None
        forwarder = self._forwarders.get(token) if token is not None else None
        if forwarder is None:
            raise MCPError(INVALID_REQUEST, "this MCP endpoint was closed")
        return forwarder


class _Gate:
    """The ASGI app at ``/<token>/mcp``: a closed or unknown token is a 404 before the SDK."""

    def __init__(self, known: Callable[[str], bool], manager: StreamableHTTPSessionManager):
        self.known = known
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.known(scope["path_params"]["token"]):
            await JSONResponse({"error": "no such endpoint"}, 404)(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


_shared: dict[int, McpEndpoint] = {}
_shared_lock = threading.Lock()


def _after_fork() -> None:
    global _shared_lock
    _shared_lock = threading.Lock()  # another thread may have held it when the parent forked


os.register_at_fork(after_in_child=_after_fork)


def shared_endpoint() -> McpEndpoint:
    """This process's endpoint; a forked child gets a new one (its server starts on first use)."""
    with _shared_lock:
        endpoint = _shared.get(os.getpid())
        if endpoint is None:
            endpoint = _shared[os.getpid()] = McpEndpoint()
        return endpoint
