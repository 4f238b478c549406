"""A tool call as an HTTP request to the services, and its answer as one of three outcomes.

The agent behind an MCP client must meet exactly what an HTTP caller meets, so a call is one
request through an ``httpx`` client (whose transport may be the harness's, faults and all) and
never retried here: a retry would hide the very loss the harness injects. The answer becomes
what a real tool server gives an agent, in Jepsen's three kinds:

- ok: a 2xx, the service's body as structured content (and as JSON text); a lookup's 404
  ``not_found`` / ``not_visible`` is an ok answer too, ``{"found": false, "error": ...}``;
- ``rejected:`` (a tool error): a 4xx, nothing was applied;
- ``outcome unknown:`` (a tool error): a 5xx, a dropped response, any transport error, or
  Stripe's 409 ``idempotency_key_in_use`` (the key's first request may still land) — the
  request may or may not have been applied.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from killpoint.fake_services.faults import DROP_HEADER
from killpoint.fake_services.mcp.arguments import ToolArgs
from killpoint.fake_services.mcp.catalogue import ToolSpec
from killpoint.fake_services.transport import loopback_transport

REJECTED = "rejected:"
UNKNOWN = "outcome unknown:"
# what a lookup answers when there is nothing (yet) to show: not a failure of the call
NOT_FOUND_CODES = frozenset({"not_found", "not_visible", "NoSuchKey"})


class Forwarder:
    """Tool calls to one services base URL, through one HTTP client kept for all of them."""

    def __init__(
        self,
        services_url: str,
        transport: httpx.BaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 5.0,
    ) -> None:
        self.services_url = services_url
        self.client = httpx.Client(
            base_url=services_url,
            transport=transport or loopback_transport(),
            headers=dict(headers or {}),
            timeout=timeout,
        )

    def call(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> CallToolResult:
        """Validate, send once, and say what happened. Blocking: run it off the event loop."""
        try:
            args = spec.arguments.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            return _error(REJECTED, f"invalid arguments, nothing was sent: {problems}", None, None)
        request = args.http()
        try:
            response = self.client.request(
                request.method,
                request.path,
                params=request.params,
                json=request.json,
                content=request.content,
                headers=request.headers,
            )
        except httpx.TransportError as exc:
            why = f"{type(exc).__name__}: {exc}"
            return _error(UNKNOWN, f"no response ({why}); it may or may not have been applied")
        return outcome(spec, args, response)

    def close(self) -> None:
        self.client.close()


def outcome(spec: ToolSpec, args: ToolArgs, response: httpx.Response) -> CallToolResult:
    """The tool result an HTTP answer makes."""
    status = response.status_code
    if response.headers.get(DROP_HEADER):
        return _error(UNKNOWN, "the response was lost; it may or may not have been applied")
    if 200 <= status < 300:
        try:
            return _ok(args.answer(response))
        except (ValueError, KeyError) as exc:  # done, but its answer unreadable: claim nothing
            return _error(UNKNOWN, f"HTTP {status}, an unreadable answer ({exc})")
    body = _body(response)
    code = body.get("error") if isinstance(body, dict) else None
    if status == 404 and spec.read_only and code in NOT_FOUND_CODES:
        assert isinstance(body, dict)
        return _ok({"found": False, **body})
    if status >= 500 or (status == 409 and code == "idempotency_key_in_use") or status < 400:
        return _error(UNKNOWN, "it may or may not have been applied", status, body)
    return _error(REJECTED, "nothing was applied", status, body)


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def _ok(result: dict[str, Any]) -> CallToolResult:
    text = json.dumps(result, ensure_ascii=False)
    return CallToolResult(content=[TextContent(text=text)], structured_content=result)


def _error(kind: str, meaning: str, status: int | None = None, body: Any = None) -> CallToolResult:
    """A tool error whose text starts with its kind; the status and body, when there is one."""
    answer = "" if status is None else f" HTTP {status} {json.dumps(body, ensure_ascii=False)}"
    text = f"{kind}{answer} ({meaning})" if answer else f"{kind} {meaning}"
    structured = {
        "outcome": "rejected" if kind == REJECTED else "unknown",
        "status": status,
        "body": body,
    }
    return CallToolResult(
        content=[TextContent(text=text)], structured_content=structured, is_error=True
    )
