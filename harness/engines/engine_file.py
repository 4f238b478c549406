"""An engine file: a command engine described in the team's own project, in TOML.

    name = "orders-ts"
    start = "node agent.mjs"             # starts or resumes one workflow, prints its status
    history = "node agent.mjs history"   # optional: its checkpoint records, as JSON lines
    grant = "node agent.mjs grant"       # optional: a human's approval at a gate
    scenarios = ["order_saga"]           # the catalogue scenarios it implements
    clock = "harness"                    # it reads KILLPOINT_CLOCK_URL ("wall": it does not)
    mcp = false                          # its workers want the services as MCP tools
    lacks = ["budget", "fencing"]        # what it does not keep: those checks answer unknown

`--engine path/to/killpoint-engine.toml` names it; its commands run in the file's folder, and
the schedules a campaign saves name the file, so `killpoint replay` rebuilds the engine alone.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from killpoint.contract.errors import KillpointError
from killpoint.harness.engines.command import Command, split
from killpoint.harness.protocol import EngineSpec


class EngineFile(BaseModel):
    """What an engine file may say; anything else in it is refused, not ignored."""

    model_config = ConfigDict(extra="forbid")

    name: str
    start: str
    history: str | None = None
    grant: str | None = None
    scenarios: list[str] = []
    clock: Literal["harness", "wall"] = "wall"
    mcp: bool = False
    lacks: list[str] = []
    description: str = ""


def is_engine_file(ref: str) -> bool:
    return ref.endswith(".toml")


def file_engine(ref: str) -> EngineSpec:
    """The engine the TOML file at `ref` describes; a `KillpointError` naming what is wrong."""
    path = Path(ref)
    try:
        doc = tomllib.loads(path.read_text())
    except OSError as exc:
        raise KillpointError(f"--engine {ref}: cannot read the engine file: {exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise KillpointError(f"--engine {ref}: not a TOML file: {exc}") from None
    try:
        spec = EngineFile.model_validate(doc)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()
        )
        raise KillpointError(f"--engine {ref}: {problems}") from None
    command = Command(
        name=spec.name,
        start=split(spec.start, f"{ref}: start"),
        history=None if spec.history is None else split(spec.history, f"{ref}: history"),
        grant=None if spec.grant is None else split(spec.grant, f"{ref}: grant"),
        cwd=path.resolve().parent,
        clock=spec.clock,
        mcp=spec.mcp,
    )
    return command.spec(
        ref, scenarios=spec.scenarios, lacks=spec.lacks, description=spec.description
    )
