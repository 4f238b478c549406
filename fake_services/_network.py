"""Network-side faults, applied where the request leaves the client.

A lost request, a lost response, a duplicated delivery or a slow link are not the service's
doing, so they are injected in the client's transport: in-process in the transport that
forwards to the ASGI app, over real HTTP in a wrapper around ``httpx.HTTPTransport``. Both
call :func:`deliver`, so the two tiers apply a decision the same way. The client sees what a real
client would: ``httpx.ReadTimeout`` when it can't know whether the request took effect.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from killpoint.fake_services.faults import DROP_HEADER, FAULT_HEADER, Fault, FaultMode

Send = Callable[[httpx.Request], httpx.Response]


def deliver(
    request: httpx.Request, fault: Fault | None, send: Send, *, sleeps: bool
) -> httpx.Response:
    """Send ``request`` through ``send`` under ``fault`` and return what the client sees.

    ``sleeps`` says whether ``slow`` really waits (the real tier: the server sleeps after it
    commits, so a long delay trips the client's own read timeout) or is decided on paper
    (in-process: longer than the read timeout behaves like a lost response, else no delay).
    """
    mode = fault.mode if fault is not None else None
    if mode is FaultMode.LOST_REQUEST:
        raise httpx.ReadTimeout("killpoint: request lost on the way", request=request)
    forwarded = fault if fault is not None and (not fault.network_side or sleeps) else None
    if mode is FaultMode.SLOW and not sleeps and fault is not None:
        # on paper: the app never sleeps, but learns of a reply that outlives the client's
        # wait, so it keeps the request in flight (payments holds its idempotency key)
        late = _exceeds_timeout(request, fault)
        forwarded = fault.model_copy(update={"params": {**fault.params, "sleep": False}})
        forwarded = forwarded if late else None
    if mode is FaultMode.DUPLICATE_DELIVERY:
        request.read()  # the same bytes go out again
    request.headers[FAULT_HEADER] = forwarded.encode() if forwarded is not None else "none"
    response = send(request)
    if mode is FaultMode.DUPLICATE_DELIVERY:
        response.read()
        copies = int(fault.params.get("copies", 2)) if fault is not None else 2
        for _ in range(copies - 1):
            send(request).close()
    if mode is FaultMode.LOST_RESPONSE or (
        mode is FaultMode.SLOW and not sleeps and _exceeds_timeout(request, fault)
    ):
        response.close()
        raise httpx.ReadTimeout("killpoint: response lost on the way", request=request)
    if response.headers.get(DROP_HEADER):
        response.close()
        raise httpx.ReadTimeout("killpoint: service timed out", request=request)
    return response


def _exceeds_timeout(request: httpx.Request, fault: Fault | None) -> bool:
    delay = float(fault.params["delay_s"]) if fault is not None else 0.0
    timeouts = request.extensions.get("timeout") or {}
    read = timeouts.get("read")
    return read is not None and delay > float(read)
