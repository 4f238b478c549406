"""An agent that calls its tools through MCP, under killpoint: pydantic-ai, a scripted model.

`naive.toml` and `careful.toml` beside it make it a command engine of `order_saga`
(`killpoint run --engine docs/examples/mcp_agent/careful.toml`): every worker is one run of
`python3 agent.py VARIANT`, in this folder, in an environment where `python3` has
`pydantic-ai-slim[mcp]` (killpoint's `mcp-agent` extra). The agent's tools are the fake
services' MCP tools at `KILLPOINT_MCP_URL`, its model a script (`agent_script.py`), its
durable state its message history (`agent_saves.py`), saved after every step
(`agent_loop.py`). `KILLPOINT_ACTION=history` prints the saves as checkpoint records, without
importing pydantic-ai (a 2 s import, paid once per worker, not once more per run).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

from agent_saves import Saves

VARIANTS = ("naive", "careful")


def main(argv: list[str]) -> int:
    variant = argv[1] if len(argv) > 1 else ""
    if variant not in VARIANTS:
        print(f"usage: agent.py {'|'.join(VARIANTS)}", file=sys.stderr)
        return 2
    workflow_id = os.environ["KILLPOINT_WORKFLOW_ID"]
    folder = Path(os.environ["KILLPOINT_WORKDIR"]) / re.sub(r"[^A-Za-z0-9_.-]", "_", workflow_id)
    saves = Saves(folder, os.environ.get("KILLPOINT_OWNER", "worker"))
    if os.environ.get("KILLPOINT_ACTION") == "history":
        for record in saves.records():
            print(json.dumps(record))
        return 0
    try:
        import httpx
        from agent_loop import Door, run
    except ImportError as exc:
        print(f"{sys.executable} cannot import the agent's framework: {exc}", file=sys.stderr)
        return 2
    env = os.environ
    url = env["KILLPOINT_HOOK_URL"]

    async def go() -> str:
        async with httpx.AsyncClient(timeout=None) as http:
            door = Door(http, url, env["KILLPOINT_CLOCK_URL"])
            return (await run(variant, saves, workflow_id, door)).line()

    print(asyncio.run(go()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
