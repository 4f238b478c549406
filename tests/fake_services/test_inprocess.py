from __future__ import annotations

import asyncio
from collections.abc import Generator
from pathlib import Path

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from killpoint.fake_services import CmsClient, FaultPlan, InProcessServices, Journal
from killpoint.fake_services.inprocess import AsgiBridge
from tests.support.service_faults import plan, rule


def test_file_journal_outlives_the_services_object(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with InProcessServices(journal_path=path) as services, services.client() as http:
        CmsClient(http).create_post("s", "t", "b")
    with Journal.open(path) as journal:
        assert journal.effects_by_business_key("cms") == {"s": 1}


def test_reset_forgets_ground_truth_and_plan(services: InProcessServices) -> None:
    services.set_plan(plan(rule("cms", "create_post", "lost_request", occurrence=None)))
    services.reset()
    assert services.faults.plan == FaultPlan()
    with services.client() as http:
        CmsClient(http).create_post("s", "t", "b")
    assert len(services.journal.requests()) == 1


def test_journal_time_is_the_injected_clock(services: InProcessServices) -> None:
    services.clock.set(1234.5)
    with services.client() as http:
        CmsClient(http).create_post("s", "t", "b")
    [effect] = services.journal.applied_effects()
    assert effect.time == 1234.5
    assert services.journal.requests_after(1234.0) != []


def test_an_async_agent_can_call_the_services_with_a_synchronous_client(
    services: InProcessServices,
) -> None:
    """Agent frameworks run tools inside their own event loop; a blocking call works there."""

    async def tool() -> str:
        with services.client() as http:
            return CmsClient(http).create_post("from-a-loop", "t", "b").slug

    assert asyncio.run(tool()) == "from-a-loop"
    assert services.journal.effects_by_business_key("cms") == {"from-a-loop": 1}


class Pending:
    """What a task would wait on: an awaitable that suspends with something to wait for."""

    def __await__(self) -> Generator[Pending, None, None]:
        yield self


def test_the_bridge_refuses_an_app_that_waits_on_a_future() -> None:
    async def waits(scope: Scope, receive: Receive, send: Send) -> None:
        await Pending()

    request = httpx.Request("GET", "http://services.test/")
    with pytest.raises(RuntimeError, match="waited on a future"):
        AsgiBridge(waits).send(request)


def test_the_bridge_answers_without_an_event_loop(services: InProcessServices) -> None:
    with services.client() as http:
        assert http.get("/_admin/health").json() == {"status": "ok"}
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()
