"""``python -m killpoint.fake_services.mcp --services-url URL``: the tools over stdio, for an
agent that spawns its own tool server. Requests go through a ``FaultInjectingTransport``, as a
real-tier worker's do, so the server's fault plan applies to them (``--unplanned``: no plan to
ask, no round trip)."""

from __future__ import annotations

import argparse

import anyio

from killpoint.fake_services.mcp.server import serve_stdio
from killpoint.fake_services.transport import FaultInjectingTransport


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m killpoint.fake_services.mcp")
    parser.add_argument("--services-url", required=True, help="the fake services' base URL")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per request")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="a header added to every request (e.g. x-killpoint-origin); repeatable",
    )
    parser.add_argument("--unplanned", action="store_true", help="the services have no plan")
    args = parser.parse_args(argv)
    headers = dict(_header(text, parser) for text in args.header)
    transport = FaultInjectingTransport(planned=not args.unplanned)
    anyio.run(
        lambda: serve_stdio(
            args.services_url, transport=transport, headers=headers, timeout=args.timeout
        )
    )


def _header(text: str, parser: argparse.ArgumentParser) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        parser.error(f"--header takes NAME:VALUE, not {text!r}")
    return name.strip(), value.strip()


if __name__ == "__main__":
    main()
