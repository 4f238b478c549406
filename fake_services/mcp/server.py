"""The MCP server of the tools, on the SDK's low-level ``Server``, served over any transport.

The low-level server, not ``MCPServer``: the tools are a table (``catalogue.TOOLS``) whose
schemas and results are ours to state exactly, and ``MCPServer`` configures the root logger of
whatever process builds it (a harness process, here). Which services a call goes to is the
``resolve`` function's to say: over stdio one fixed URL, over HTTP the URL the endpoint's token
names, so one server object can serve many harness workers at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import anyio.to_thread
import httpx
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
)

from killpoint.fake_services.mcp.catalogue import BY_NAME, TOOLS
from killpoint.fake_services.mcp.forward import Forwarder

NAME = "killpoint-fake-services"
INSTRUCTIONS = (
    "Each tool is one request to a downstream service. A tool error starting 'rejected:'"
    " means nothing was applied. One starting 'outcome unknown:' means the request may or"
    " may not have been applied: resolve it with a lookup where one exists; never assume."
)

Context = ServerRequestContext[Any, Any]
Resolve = Callable[[Context], Forwarder]


def build_server(resolve: Resolve) -> Server[Any]:
    """An MCP server whose tools forward to the services ``resolve`` picks for each call."""
    tools = [spec.tool() for spec in TOOLS]

    async def list_tools(ctx: Context, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: Context, params: CallToolRequestParams) -> CallToolResult:
        spec = BY_NAME.get(params.name)
        if spec is None:
            raise MCPError(INVALID_PARAMS, f"unknown tool {params.name!r}")
        forwarder = resolve(ctx)
        # the client is synchronous (the harness's transports are): off the event loop
        call = partial(forwarder.call, spec, params.arguments or {})
        return await anyio.to_thread.run_sync(call)

    def input_schema(name: str) -> dict[str, Any] | None:
        spec = BY_NAME.get(name)
        return None if spec is None else spec.input_schema()

    return Server(
        NAME,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(
    services_url: str,
    *,
    transport: httpx.BaseTransport | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 5.0,
) -> None:
    """Serve the tools over this process's stdin and stdout until the client closes them."""
    forwarder = Forwarder(services_url, transport, headers, timeout)
    server = build_server(lambda ctx: forwarder)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        forwarder.close()
