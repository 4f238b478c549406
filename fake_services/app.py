"""One Starlette app serving every fake service, the same object in both tiers.

In-process it is driven directly through a sync ASGI bridge; in the real tier uvicorn serves it.
All endpoints are ``async def`` and do their (short, local) SQLite work inline, so nothing runs
in a threadpool and the order of effects is the order of requests.
"""

from __future__ import annotations

from starlette.applications import Starlette

from fake_services import admin, artifacts, cms, mailer, payments, publisher
from fake_services._service import Services
from fake_services.clock import ServiceClock
from fake_services.faults import FaultInjector, FaultPlan
from fake_services.journal import Journal


def build_app(
    journal: Journal,
    faults: FaultInjector | FaultPlan | None = None,
    clock: ServiceClock | None = None,
) -> Starlette:
    """Mount payments, cms, mailer, publisher, artifacts and ``/_admin`` on one app."""
    injector = faults if isinstance(faults, FaultInjector) else FaultInjector(faults)
    services = Services(journal, injector, clock or ServiceClock())
    routes = [
        route
        for module in (payments, cms, mailer, publisher, artifacts, admin)
        for route in module.routes(services)
    ]
    app = Starlette(routes=routes)
    app.state.services = services
    return app
