"""One Starlette app serving every fake service, the same object in both tiers.

In-process it is driven directly through a sync ASGI bridge; in the real tier uvicorn serves it.
All endpoints are ``async def`` and do their (short, local) SQLite work inline, so nothing runs
in a threadpool and the order of effects is the order of requests.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from killpoint.fake_services import (
    admin,
    artifacts,
    cms,
    files,
    mailer,
    outbound,
    payments,
    publisher,
)
from killpoint.fake_services._service import Services
from killpoint.fake_services.clock import ServiceClock
from killpoint.fake_services.faults import CLOCK_HEADER, FaultInjector, FaultPlan
from killpoint.fake_services.journal import Journal


def build_app(
    journal: Journal,
    faults: FaultInjector | FaultPlan | None = None,
    clock: ServiceClock | None = None,
) -> Starlette:
    """Mount payments, cms, mailer, outbound, publisher, artifacts, files and ``/_admin``."""
    injector = faults if isinstance(faults, FaultInjector) else FaultInjector(faults)
    services = Services(journal, injector, clock or ServiceClock())
    routes = [
        route
        for module in (payments, cms, mailer, outbound, publisher, artifacts, files, admin)
        for route in module.routes(services)
    ]
    app = Starlette(routes=routes, middleware=[Middleware(ClockFromCaller, clock=services.clock)])
    app.state.services = services
    return app


class ClockFromCaller:
    """Set the services' clock from the reading a request carries (``x-killpoint-now``).

    In the real tier the injected clock lives in the workers' memory, not the server's; each
    request carries the worker's reading, so a service sees the time its caller sees, clock
    jumps in the middle of a worker included. In process the clock is shared and no request
    carries one."""

    def __init__(self, app: ASGIApp, clock: ServiceClock) -> None:
        self.app = app
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == _CLOCK:
                    self.clock.set(float(value))
                    break
        await self.app(scope, receive, send)


_CLOCK = CLOCK_HEADER.encode()
