"""The fake services as MCP tools, through the SDK's own clients: same journal, same faults."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import select
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

# The imports after the needs below load the extra they check for, as importorskip's would.
# ruff: noqa: E402
from tests.support.needs import needs_module

needs_module("mcp", "the MCP SDK is not installed: pip install 'killpoint[mcp]'")

from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Tool

from killpoint import fake_services
from killpoint.fake_services import (
    CmsClient,
    FaultMode,
    InProcessServices,
    PaymentsClient,
    ServiceProcess,
)
from killpoint.fake_services.faults import OPERATIONS, ORIGIN_HEADER
from killpoint.fake_services.mcp import TOOLS, McpEndpoint, shared_endpoint
from tests.support.service_faults import plan, rule

CHARGE = {"order_id": "o1", "amount_cents": 1200, "currency": "EUR", "idempotency_key": "k1"}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[McpEndpoint]:
    with McpEndpoint() as running:
        yield running


@pytest.fixture
def url(endpoint: McpEndpoint, services: InProcessServices) -> Iterator[str]:
    opened = endpoint.open(services.base_url, services.transport())
    yield opened
    endpoint.close_url(opened)


def call(url: str, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """One tool call from a fresh client, as a restarted agent process would make it."""

    async def go() -> CallToolResult:
        async with Client(url) as client:
            return await client.call_tool(name, arguments)

    return anyio.run(go)


def listed(url: str) -> dict[str, Tool]:
    async def go() -> dict[str, Tool]:
        async with Client(url) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    return anyio.run(go)


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def test_there_is_one_tool_per_service_operation_and_no_mailer_lookup(url: str) -> None:
    tools = listed(url)
    assert set(tools) == {f"{service}_{op}" for _, _, service, op in OPERATIONS}
    assert [name for name in tools if name.startswith("mailer_")] == ["mailer_send"]
    assert "no lookup exists" in (tools["mailer_send"].description or "")


def test_idempotency_key_is_an_argument_exactly_where_the_real_api_takes_one(url: str) -> None:
    keyed = {
        name
        for name, tool in listed(url).items()
        if "idempotency_key" in tool.input_schema["properties"]
    }
    assert keyed == {
        "payments_create_charge",
        "payments_refund",
        "outbound_send",
        "files_put",
        "files_append",
        "files_delete",
    }


def test_a_tool_schema_says_which_arguments_are_required_and_refuses_others(url: str) -> None:
    tools = listed(url)
    charge = tools["payments_create_charge"].input_schema
    assert set(charge["required"]) == {"order_id", "amount_cents", "currency"}
    assert charge["properties"]["amount_cents"]["type"] == "integer"
    assert charge["additionalProperties"] is False
    assert tools["payments_charge_by_key"].input_schema["required"] == ["key"]
    assert tools["cms_get_post"].annotations is not None
    assert tools["cms_get_post"].annotations.read_only_hint is True


def test_a_charge_lands_in_the_journal_with_its_idempotency_key(
    url: str, services: InProcessServices
) -> None:
    result = call(url, "payments_create_charge", CHARGE)
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["idempotency_key"] == "k1"
    (effect,) = services.journal.applied_effects("payments")
    assert (effect.operation, effect.idempotency_key) == ("create_charge", "k1")
    assert effect.resource_id == result.structured_content["id"]


def test_the_same_key_twice_is_one_charge(url: str, services: InProcessServices) -> None:
    first, second = (call(url, "payments_create_charge", CHARGE) for _ in range(2))
    assert first.structured_content == second.structured_content
    assert len(services.journal.applied_effects("payments")) == 1
    assert [r.outcome for r in services.journal.requests()] == ["applied", "replayed"]


def test_an_mcp_call_fingerprints_as_the_typed_client_call(
    url: str, services: InProcessServices
) -> None:
    with services.client() as http:
        PaymentsClient(http).create_charge("k1", "o1", 1200, "EUR")
        CmsClient(http).create_post("s", "t", "b")
    assert not call(url, "payments_create_charge", CHARGE).is_error  # replayed, not refused
    call(url, "cms_create_post", {"slug": "s", "title": "t", "body": "b"})
    charges = services.journal.requests("payments")
    posts = services.journal.requests("cms")
    assert [r.outcome for r in charges] == ["applied", "replayed"]
    assert charges[0].fingerprint == charges[1].fingerprint
    assert posts[0].fingerprint == posts[1].fingerprint


@pytest.mark.parametrize(
    ("mode", "applied"),
    [
        (FaultMode.LOST_RESPONSE, 1),
        (FaultMode.LOST_REQUEST, 0),
        (FaultMode.ERROR_AFTER_COMMIT, 1),
        (FaultMode.ERROR_BEFORE_COMMIT, 0),
        (FaultMode.TIMEOUT_BEFORE_COMMIT, 0),
    ],
)
def test_a_lost_or_failed_answer_is_outcome_unknown_whatever_was_applied(
    url: str, services: InProcessServices, mode: FaultMode, applied: int
) -> None:
    services.set_plan(plan(rule("payments", "create_charge", mode)))
    result = call(url, "payments_create_charge", CHARGE)
    assert result.is_error
    assert text(result).startswith("outcome unknown:")
    assert len(services.journal.applied_effects("payments")) == applied
    assert services.faults.counts() == [1]  # the harness's fault met the MCP call


def test_a_key_still_in_flight_is_outcome_unknown_not_rejected(
    url: str, services: InProcessServices
) -> None:
    # a reply that outlives the read timeout keeps the key busy: Stripe's 409 may yet land
    services.set_plan(plan(rule("payments", "create_charge", FaultMode.SLOW, delay_s=60)))
    assert text(call(url, "payments_create_charge", CHARGE)).startswith("outcome unknown:")
    busy = call(url, "payments_create_charge", CHARGE)
    assert text(busy).startswith("outcome unknown: HTTP 409")
    assert "idempotency_key_in_use" in text(busy)


def test_a_4xx_is_rejected_and_nothing_applied(url: str, services: InProcessServices) -> None:
    call(url, "payments_create_charge", CHARGE)
    result = call(url, "payments_create_charge", {**CHARGE, "amount_cents": 999})
    assert result.is_error
    assert text(result).startswith("rejected: HTTP 400")
    assert "idempotency_error" in text(result)
    assert len(services.journal.applied_effects("payments")) == 1


def test_invalid_arguments_are_rejected_before_anything_is_sent(
    url: str, services: InProcessServices
) -> None:
    result = call(url, "payments_create_charge", {**CHARGE, "amount_cents": -5})
    assert result.is_error
    assert text(result).startswith("rejected: invalid arguments")
    assert services.journal.requests() == []


def test_a_lookup_that_finds_nothing_answers_found_false(url: str) -> None:
    result = call(url, "payments_charge_by_key", {"key": "never-used"})
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["found"] is False
    assert result.structured_content["error"] == "not_found"
    refund = call(url, "payments_refund", {"charge_id": "ch_missing", "amount_cents": 1})
    assert text(refund).startswith("rejected: HTTP 404")  # a write's 404 refuses, not answers


def test_not_visible_is_told_apart_from_not_found(url: str, services: InProcessServices) -> None:
    services.set_plan(plan(rule("publisher", "publish", FaultMode.WITHHELD_VISIBILITY)))
    assert not call(url, "publisher_publish", {"ref": "r1", "content": "c"}).is_error
    withheld = call(url, "publisher_read", {"ref": "r1"}).structured_content
    never = call(url, "publisher_read", {"ref": "r2"}).structured_content
    assert withheld is not None and never is not None
    assert (withheld["found"], withheld["error"]) == (False, "not_visible")
    assert (never["found"], never["error"]) == (False, "not_found")


def test_bytes_travel_as_utf8_or_base64_and_a_corrupt_artifact_shows(
    url: str, services: InProcessServices
) -> None:
    data = bytes(range(256))
    put = call(
        url, "artifacts_put", {"content": base64.b64encode(data).decode(), "encoding": "base64"}
    )
    address = hashlib.sha256(data).hexdigest()
    assert put.structured_content is not None and put.structured_content["sha256"] == address
    services.set_plan(plan(rule("artifacts", "get", FaultMode.CORRUPT_ARTIFACT)))
    got = call(url, "artifacts_get", {"sha256": address}).structured_content
    assert got is not None and got["encoding"] == "base64" and got["address"] == address
    assert got["sha256"] != address  # the bytes received are not the ones stored
    call(url, "files_put", {"key": "dir/a.txt", "content": "héllo", "idempotency_key": "f1"})
    file = call(url, "files_get", {"key": "dir/a.txt"}).structured_content
    assert file is not None and (file["content"], file["encoding"]) == ("héllo", "utf-8")
    (write,) = services.journal.applied_effects("files")
    assert (write.business_key, write.idempotency_key) == ("dir/a.txt", "f1")


def test_two_endpoints_at_once_forward_to_their_own_services(endpoint: McpEndpoint) -> None:
    with InProcessServices() as one, InProcessServices() as two:
        first = endpoint.open(one.base_url, one.transport(), {ORIGIN_HEADER: "worker-1"})
        second = endpoint.open(two.base_url, two.transport(), {ORIGIN_HEADER: "worker-2"})
        post = {"slug": "s", "title": "t", "body": "b"}

        async def both() -> None:  # two workers' agents, each with its own client, at once
            async with Client(first) as a, Client(second) as b, anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(b.call_tool, "cms_create_post", post)
                    tg.start_soon(a.call_tool, "payments_create_charge", CHARGE)

        try:
            anyio.run(both)
        finally:
            endpoint.close_url(first)
            endpoint.close_url(second)
        assert [(e.service, e.origin) for e in one.journal.applied_effects()] == [
            ("payments", "worker-1")  # one key: one charge
        ]
        assert [(e.service, e.origin) for e in two.journal.applied_effects()] == [
            ("cms", "worker-2")
        ] * 3


def test_a_closed_url_answers_404(endpoint: McpEndpoint, services: InProcessServices) -> None:
    opened = endpoint.open(services.base_url, services.transport())
    endpoint.close_url(opened)
    assert httpx.post(opened, json={}).status_code == 404


def test_a_handshake_era_client_is_served_too(url: str, services: InProcessServices) -> None:
    async def go() -> CallToolResult:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool(
                "cms_create_post", {"slug": "s", "title": "t", "body": "b"}
            )

    assert not anyio.run(go).is_error
    assert [e.business_key for e in services.journal.applied_effects("cms")] == ["s"]


def test_a_forked_child_gets_a_server_of_its_own(services: InProcessServices) -> None:
    parent = shared_endpoint()
    parent_url = parent.open(services.base_url, services.transport())
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its threads are gone, so the getter must start a new server
        ok = False
        try:
            child = shared_endpoint()
            child_url = child.open(services.base_url, services.transport())
            ok = child is not parent and child.port != parent.port and len(listed(child_url)) > 0
        finally:
            os.write(write_end, b"1" if ok else b"0")
            os._exit(0)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 15)
        answer = os.read(read_end, 1) if ready else b""
    finally:
        os.close(read_end)
        if not answer:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert answer == b"1"
    assert len(listed(parent_url)) > 0  # the parent's server is untouched
    parent.close()


@pytest.mark.realtier
def test_stdio_serves_the_same_tools_against_a_real_server(tmp_path: Path) -> None:
    with ServiceProcess(tmp_path / "journal.sqlite") as server:
        server.set_plan(plan(rule("payments", "create_charge", FaultMode.LOST_RESPONSE, 2)))
        command = ["-m", "killpoint.fake_services.mcp", "--services-url", server.base_url]
        params = StdioServerParameters(command=sys.executable, args=command, env=dict(os.environ))

        async def go() -> tuple[set[str], CallToolResult, CallToolResult]:
            async with Client(params) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                first = await client.call_tool("payments_create_charge", CHARGE)
                lost = await client.call_tool(
                    "payments_create_charge", {**CHARGE, "idempotency_key": "k2"}
                )
                return names, first, lost

        names, first, lost = anyio.run(go)
        assert len(names) == len(OPERATIONS) and "mailer_send" in names
        assert not first.is_error
        assert text(lost).startswith("outcome unknown:")  # the server's plan met the MCP call
        keys = [e.idempotency_key for e in server.journal.applied_effects("payments")]
        assert keys == ["k1", "k2"]


def test_the_readme_table_lists_every_tool_with_its_arguments() -> None:
    readme = Path(fake_services.__file__).parent / "README.md"
    rows = re.findall(r"^\| `(\w+)` \| ((?:`\w+\??` ?)+) \|", readme.read_text(), re.MULTILINE)
    documented = {name: set(args.split()) for name, args in rows}
    actual: dict[str, set[str]] = {}
    for spec in TOOLS:
        schema = spec.input_schema()
        required = set(schema.get("required", []))
        actual[spec.name] = {
            f"`{arg}`" if arg in required else f"`{arg}?`" for arg in schema["properties"]
        }
    assert documented == actual
