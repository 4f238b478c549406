"""The fake services as MCP tools, one per service operation (needs the ``mcp`` extra).

Every tool call is one HTTP request to the services, so it lands in the same journal and meets
the same faults as an HTTP caller's. Serve them on loopback for the harness
(:class:`McpEndpoint`, :func:`shared_endpoint`) or over stdio (``python -m
killpoint.fake_services.mcp --services-url URL``). Not imported by ``killpoint.fake_services``:
the SDK is an optional dependency.
"""

from killpoint.fake_services.mcp.catalogue import TOOLS, ToolSpec
from killpoint.fake_services.mcp.endpoint import McpEndpoint, shared_endpoint
from killpoint.fake_services.mcp.forward import REJECTED, UNKNOWN, Forwarder
from killpoint.fake_services.mcp.server import build_server, serve_stdio

__all__ = [
    "REJECTED",
    "TOOLS",
    "UNKNOWN",
    "Forwarder",
    "McpEndpoint",
    "ToolSpec",
    "build_server",
    "serve_stdio",
    "shared_endpoint",
]
