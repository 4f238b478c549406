"""The hook calls `docs/any-language.md` shows, each run as a command engine: it is killed at
the boundary it reports, and the worker after it runs to its status line. So a snippet a reader
copies into a TypeScript or Go engine is known to work, not only to read well."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from killpoint.harness.catalogue import installed
from killpoint.harness.engines.command import Command
from killpoint.harness.engines.engine_file import file_engine
from killpoint.harness.protocol import CLOCK
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint
from tests.support.blocks import ROOT, Block, read_blocks
from tests.support.needs import needs_program
from tests.support.node_examples import langgraph_ts

__all__ = ["langgraph_ts"]  # the session fixture, used by name

PAGE = ROOT / "docs" / "any-language.md"


def snippet(name: str) -> Block:
    # <!-- example: hook-python --> <!-- example: hook-typescript --> <!-- example: hook-go -->
    # <!-- example: engine-file -->
    (block,) = [b for b in read_blocks(PAGE) if b.marker.get("example") == name]
    return block


def needed(program: str) -> str:
    """The program's path; under CI a missing one fails, elsewhere the test skips saying why."""
    return needs_program(program, "the hook snippet is run with it (.ci/run installs it)")


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with World.open(tmp_path / "world") as opened:
        yield opened


def killed_at_its_hook(world: World, start: tuple[str, ...]) -> None:
    engine = Command(name="snippet", start=start).spec("snippet")
    crash = HitPoint(worker=0, step="charge", boundary="checkpoint.committed")
    plan = FaultSchedule(scenario="email", run_id="r1", crashes=(crash,), max_workers=2)
    history = run_schedule(world, installed().scenario("email"), plan, engine)
    assert [(w.end, w.status) for w in history.workers] == [
        ("killed", None),
        ("stopped", "completed"),
    ], [w.reason for w in history.workers]
    assert [(h.worker, h.boundary) for h in history.hits] == [
        (0, "checkpoint.committed"),
        (1, "checkpoint.committed"),
    ]


def test_the_python_hook_snippet_reports_its_boundary_and_dies_there(
    world: World, tmp_path: Path
) -> None:
    program = tmp_path / "hook.py"
    program.write_text(snippet("hook-python").text)
    killed_at_its_hook(world, (sys.executable, str(program)))


def test_the_go_hook_snippet_reports_its_boundary_and_dies_there(
    world: World, tmp_path: Path
) -> None:
    go = needed("go")
    (tmp_path / "hook.go").write_text(snippet("hook-go").text)
    cache = {"GOCACHE": str(tmp_path / "gocache"), "GOPATH": str(tmp_path / "gopath")}
    subprocess.run(
        [go, "build", "-o", "hook", "hook.go"],
        cwd=tmp_path,
        check=True,
        env={**os.environ, **cache, "GO111MODULE": "off"},
    )
    killed_at_its_hook(world, (str(tmp_path / "hook"),))


def test_the_typescript_hook_snippet_reports_its_boundary_and_dies_there(
    world: World, tmp_path: Path, langgraph_ts: Path
) -> None:
    """Type-stripped by the LangGraph.js example's own esbuild, run by the machine's node."""
    (tmp_path / "hook.ts").write_text(snippet("hook-typescript").text)
    esbuild = langgraph_ts / "node_modules" / ".bin" / "esbuild"
    subprocess.run(
        [str(esbuild), "hook.ts", "--format=esm", "--platform=node", "--outfile=hook.mjs"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    killed_at_its_hook(world, (needed("node"), str(tmp_path / "hook.mjs")))


def test_the_engine_file_shown_is_one_the_harness_reads(tmp_path: Path) -> None:
    path = tmp_path / "killpoint-engine.toml"
    path.write_text(snippet("engine-file").text)
    spec = file_engine(str(path))
    assert spec.scenarios == ("order_saga",) and spec.reader is not None
    assert CLOCK not in spec.lacks and {"budget", "fencing", "lease"} <= spec.lacks
