"""The real tier's client side: network faults in an httpx transport over loopback.

In the real tier the request really travels to a uvicorn process and the service really commits;
the faults a network would cause are played here, around ``httpx.HTTPTransport``: a lost
response is read and thrown away and the caller gets ``httpx.ReadTimeout``. The fault decision
comes from the server (``POST /_admin/faults/decide``) because the server outlives the workers
that the harness SIGKILLs, so the plan's occurrence counters survive a worker restart.
"""

from __future__ import annotations

import functools
import json
import socket
import ssl
from collections.abc import Callable

import httpx

from killpoint.fake_services._network import deliver
from killpoint.fake_services.faults import CLOCK_HEADER, Fault, classify


def loopback_transport() -> httpx.HTTPTransport:
    """A transport with Nagle's algorithm off: a request is written in two pieces, and without
    TCP_NODELAY the second waits for the server's delayed ACK, 40 ms per request on loopback.
    Certificate verification is off because these URLs are plain HTTP on 127.0.0.1 only."""
    # plain HTTP on loopback: no TLS, so no certificate store to load (17 ms per transport)
    return httpx.HTTPTransport(
        verify=_no_tls(), socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    )


@functools.cache
def _no_tls() -> ssl.SSLContext:
    """The unverifying context httpx would build for ``verify=False``, built once: a new
    ``SSLContext`` costs ~1.5 ms, and a forked worker inherits this one from its parent."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class FaultInjectingTransport(httpx.BaseTransport):
    """Wrap a real transport; apply the fault plan of the server it talks to.

    ``planned=False`` says the server has no fault plan: no request can meet a fault, so none
    asks for a decision (a round trip per mutating request saved). ``clock``, if given, is read
    into every request, so the server keeps the caller's time."""

    def __init__(
        self,
        inner: httpx.BaseTransport | None = None,
        *,
        planned: bool = True,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._inner = inner or loopback_transport()
        self._planned = planned
        self._clock = clock

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._clock is not None:
            request.headers[CLOCK_HEADER] = repr(self._clock())
        target = classify(request.method, request.url.path)
        if target is None:
            return self._inner.handle_request(request)
        if not self._planned:
            return deliver(request, None, self._inner.handle_request, sleeps=True)
        fault = self._decide(request, *target)
        return deliver(request, fault, self._inner.handle_request, sleeps=True)

    def _decide(self, request: httpx.Request, service: str, operation: str) -> Fault | None:
        decision = httpx.Request(
            "POST",
            request.url.copy_with(path="/_admin/faults/decide", query=None),
            json={"service": service, "operation": operation},
            extensions={"timeout": request.extensions.get("timeout", {})},
        )
        response = self._inner.handle_request(decision)
        try:
            payload = json.loads(response.read())
        finally:
            response.close()
        if response.status_code != 200:
            raise httpx.RemoteProtocolError(f"fault decision failed: {payload}", request=request)
        fault = payload["fault"]
        return None if fault is None else Fault.model_validate(fault)

    def close(self) -> None:
        self._inner.close()


def connect(base_url: str, timeout: float = 5.0) -> httpx.Client:
    """A client for real-tier services at ``base_url`` (e.g. from a worker process)."""
    return httpx.Client(base_url=base_url, transport=FaultInjectingTransport(), timeout=timeout)
