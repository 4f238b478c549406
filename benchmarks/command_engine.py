"""What an engine as a command costs: the same single-crash campaign, engine by engine.

A command engine (`harness.engines.command`) is a process per worker, reached through a
loopback door: every request and hook call is an HTTP round trip, every worker a process
start. This runs one scenario's single crashes (one process, no other phase) for each engine
named, in turns, `--repeat` times, and prints runs per second and each engine's time per run
against the first engine's, measured in the same run: the machine's noise touches all alike.

    python benchmarks/command_engine.py [--scenario order_saga] [--repeat 2] [--engine REF ...]

By default: the reference engine in process; the same engine behind the command protocol
(`python -m killpoint.harness.engines.as_command reference`); LangGraph's naive variant in
process, and LangGraph.js's naive variant as a command (`docs/examples/langgraph-ts`, once
its packages are installed there) — each pair one engine, two ways of testing it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from killpoint.harness.campaign.launch import run_campaign
from killpoint.harness.engines.reference import ensure_key

ROOT = Path(__file__).parents[1]
TS = ROOT / "docs" / "examples" / "langgraph-ts"
SINGLES: dict[str, Any] = {
    "double": False,
    "interleave": False,
    "network": False,
    "named": False,
    "deploys": False,
    "operators": False,
    "lies": False,
    "neighbours": False,
    "pauses": False,
    "real_pass": False,
    "canaries": False,
    "explore": "0",
}


def defaults() -> list[str]:
    bridge = f"cmd:{sys.executable} -m killpoint.harness.engines.as_command"
    engines = ["reference", f"{bridge} reference"]
    try:
        import langgraph  # noqa: F401
    except ImportError:
        print("(langgraph is not installed: its pair is left out)")
        return engines
    engines.append("langgraph:naive")
    if (TS / "node_modules").is_dir():
        engines.append(str(TS / "naive.toml"))
    else:
        print(f"({TS.relative_to(ROOT)} has no node_modules: run npm ci there for its row)")
    return engines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="order_saga")
    parser.add_argument("--repeat", type=int, default=2, help="campaigns per engine, in turns")
    parser.add_argument("--engine", action="append", help="an --engine reference (repeatable)")
    args = parser.parse_args(argv)
    ensure_key()
    engines = args.engine or defaults()
    seconds: dict[str, list[float]] = {e: [] for e in engines}
    runs: dict[str, int] = {}
    for _ in range(args.repeat):
        for engine in engines:
            with tempfile.TemporaryDirectory(prefix="killpoint-cmd-bench-") as tmp:
                started = time.perf_counter()
                result = run_campaign(args.scenario, engine=engine, workdir=tmp, **SINGLES)
                wall = time.perf_counter() - started
            runs[engine] = len(result.runs)
            seconds[engine].append(wall / len(result.runs))
            print(f"  {engine}: {len(result.runs)} runs in {wall:.1f} s", flush=True)
    first = statistics.median(seconds[engines[0]])
    print(f"\n{args.scenario}, single crashes, median of {args.repeat} campaigns per engine:")
    for engine in engines:
        per_run = statistics.median(seconds[engine])
        print(
            f"{engine[-60:]:60} {runs[engine]:3} runs  {per_run * 1000:7.0f} ms/run  "
            f"{1 / per_run:6.1f} runs/s  {per_run / first:5.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
