"""The door a command engine's worker reaches the harness through: services, hook and clock.

An engine that runs as a command (`harness.engines.command`) is a process of its own, in any
language, so the harness cannot hand it an HTTP client or a hook object. It hands it URLs
instead, all on one loopback server per harness process, one door per worker:

- `…/services/<path>`: the fake services, through the worker's own client (`WorkerEnv.http`),
  so every request is signed with the run's origin, meets the schedule's network faults and is
  a transport boundary (`harness.run.transport`) like an in-process engine's. A lost request or
  response, or a timeout, closes the connection without an answer, as a network would.
- `…/hook`: `POST {"boundary": …, "step": …}` is a boundary hit the engine reports itself; the
  answer comes when the worker may go on (a pair's other worker may run first).
- `…/clock`: `GET` answers `{"now": T}`, the world clock the oracle judges time by; `POST
  {"sleep": S}` waits S seconds on it (the world clock moves; no wall time passes).

At a hit where the schedule kills the worker the harness holds the answer and kills the
engine's whole process group (`WorkerDoor.die`): the engine never learns what it asked.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import httpx

from killpoint.contract.boundaries import START_TAKEN, BoundaryHook
from killpoint.contract.clock import Clock
from killpoint.harness.run.killswitch import Killed

# What the harness sets itself on a forwarded request, or the transport frames: never the engine's.
_DROP_REQUEST = frozenset(
    {"host", "content-length", "connection", "transfer-encoding", "authorization", "keep-alive"}
)
_DROP_RESPONSE = frozenset({"content-length", "connection", "transfer-encoding", "keep-alive"})


@dataclass
class WorkerDoor:
    """One worker's way in: its client to the services, its hook, the clock, and how to kill
    its engine. `death` is the death delivered here, for the worker's driver to raise."""

    http: httpx.Client
    hook: BoundaryHook
    clock: Clock
    kill: Callable[[], None]
    took: Callable[[], None] = lambda: None  # the engine reported `start.taken`
    death: Killed | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def die(self, death: Killed) -> None:
        with self._lock:
            if self.death is None:
                self.death = death
        self.kill()


class Gateway:
    """The loopback server of this process's command workers (one per process: a forked
    worker of the real tier gets its own, `gateway()`)."""

    def __init__(self) -> None:
        self._doors: dict[str, WorkerDoor] = {}
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.doors = self._doors
        self.port = self._server.server_address[1]
        thread = threading.Thread(
            target=self._server.serve_forever, name="killpoint-gateway", daemon=True
        )
        thread.start()

    def open(self, door: WorkerDoor) -> str:
        """The base URL of a new door: `{url}/services`, `{url}/hook`, `{url}/clock`."""
        token = secrets.token_hex(8)
        self._doors[token] = door
        return f"http://127.0.0.1:{self.port}/w/{token}"

    def close_door(self, url: str) -> None:
        self._doors.pop(url.rstrip("/").rsplit("/", 1)[-1], None)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


_gateways: dict[int, Gateway] = {}


def gateway() -> Gateway:
    """This process's gateway, started at first use (a forked child starts its own: the
    parent's serving thread did not survive the fork)."""
    pid = os.getpid()
    if pid not in _gateways:
        _gateways[pid] = Gateway()
    return _gateways[pid]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    doors: dict[str, WorkerDoor]

    def server_bind(self) -> None:
        # an answer is written in pieces: with Nagle on, a keep-alive client waits 40 ms each
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().server_bind()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: an engine's client reuses its connection
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the journal and the hits are the record."""

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        _, w, token, *rest = [*parts.path.split("/", 3), "", ""][:4]
        door = self.server.doors.get(token) if w == "w" else None
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if door is None:
            return self._answer(404, {"error": "no such worker (it has ended)"})
        if door.death is not None:  # a dead worker's last words reach nobody
            return self._hang_up()
        route = rest[0] if rest else ""
        try:
            if route == "hook" and self.command == "POST":
                self._hook(door, body)
            elif route == "clock" and self.command == "GET":
                self._answer(200, {"now": door.clock.now()})
            elif route == "clock" and self.command == "POST":
                self._sleep(door, body)
            elif route == "services" or route.startswith("services/"):
                path = "/" + route.removeprefix("services").lstrip("/")
                self._forward(door, path, parts.query, body)
            else:
                self._answer(404, {"error": f"no route {self.command} {parts.path}"})
        except Killed as death:
            door.die(death)
            self._hang_up()

    def _hook(self, door: WorkerDoor, body: bytes) -> None:
        try:
            hit = json.loads(body or b"{}")
            boundary, step = hit["boundary"], hit.get("step")
            if not isinstance(boundary, str) or not (step is None or isinstance(step, str)):
                raise TypeError("boundary and step are strings")
        except (ValueError, KeyError, TypeError) as exc:
            return self._answer(
                400, {"error": f'the hook takes {{"boundary": str, "step": str?}}: {exc}'}
            )
        if boundary == START_TAKEN:  # taken before it can die there, as an ack is sent
            door.took()
        door.hook(boundary, step)
        self._answer(200, {"ok": True})

    def _sleep(self, door: WorkerDoor, body: bytes) -> None:
        try:
            seconds = json.loads(body or b"{}")["sleep"]
            if not isinstance(seconds, int | float) or not 0 <= seconds <= 86_400 * 366:
                raise TypeError("seconds between 0 and a year")
        except (ValueError, KeyError, TypeError) as exc:
            return self._answer(400, {"error": f'the clock takes {{"sleep": seconds}}: {exc}'})
        door.clock.sleep(seconds)
        self._answer(200, {"now": door.clock.now()})

    def _forward(self, door: WorkerDoor, path: str, query: str, body: bytes) -> None:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _DROP_REQUEST}
        url = path + (f"?{query}" if query else "")
        try:
            response = door.http.request(self.command, url, content=body, headers=headers)
        except httpx.TransportError:  # lost on the way, or its answer was: the engine hears nothing
            return self._hang_up()
        kept = [(k, v) for k, v in response.headers.items() if k.lower() not in _DROP_RESPONSE]
        self._send(response.status_code, response.content, kept)

    def _answer(self, status: int, doc: object) -> None:
        self._send(status, json.dumps(doc).encode(), [("content-type", "application/json")])

    def _send(self, status: int, content: bytes, headers: list[tuple[str, str]]) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def _hang_up(self) -> None:
        """Close the connection with no answer: what a lost response looks like to a client."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
