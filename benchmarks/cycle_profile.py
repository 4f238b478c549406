"""Where an in-process crash-recover cycle's time goes, by part (issue 28).

    .venv/bin/python benchmarks/cycle_profile.py [--cycles 60] [--out FILE.prof]

cProfile over `cycles.crash_cycles` with each worker run inline: the in-process tier runs a
worker on a thread of its own (`harness/run/timeout.py`), where cProfile, which follows one
thread, would not see it. The parts nest as printed (the services' app is inside the service
requests); cProfile inflates code of many small calls, so compare shares between two trees in
one sitting, and absolute costs with `valgrind --tool=callgrind` instruction counts.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import cycles
from flow import make_scenario

from killpoint.harness.run import runner

T = TypeVar("T")

# (label, file the function is in, function name)
PARTS = (
    ("world reset before a run (begin_run)", "harness/run/world.py", "begin_run"),
    ("worker set-up (engine, HTTP client)", "harness/run/runner.py", "build"),
    ("service requests, whole", "httpx/_client.py", "request"),
    ("  of which the services' app", "starlette/applications.py", "__call__"),
    ("checkpoint commits (fold, seal, store)", "reference/dispatcher.py", "commit"),
    ("kill-switch hits (recording)", "harness/run/killswitch.py", "_hit"),
    ("history read, canary scan included", "harness/run/run_history.py", "history_of"),
    ("  of which the canary scan", "harness/run/canary_scan.py", "scanned"),
)


def inline(call: Callable[[], T], *_: object) -> T:
    """A worker's run on the caller's thread, in place of `timeout.within`."""
    return call()


def profile(cycles_n: int) -> pstats.Stats:
    setattr(runner, "within", inline)  # noqa: B010 -- a module global, replaced for the profile
    scenario = make_scenario(10)
    with tempfile.TemporaryDirectory() as folder, cycles.sqlite_world(Path(folder)) as world:
        cycles.crash_cycles(world, scenario, 10, tag="w")  # warm: compiled statements, caches
        prof = cProfile.Profile()
        prof.enable()
        cycles.crash_cycles(world, scenario, cycles_n)
        prof.disable()
    return pstats.Stats(prof)


def cumulative(stats: pstats.Stats, file: str, function: str) -> float:
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    return float(sum(v[3] for k, v in table.items() if k[0].endswith(file) and k[2] == function))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=60)
    parser.add_argument("--out", help="also write the raw profile here")
    args = parser.parse_args()
    stats = profile(args.cycles)
    if args.out:
        stats.dump_stats(args.out)
    total = cumulative(stats, "benchmarks/cycles.py", "crash_cycles")
    print(f"{args.cycles} cycles, {total:.3f} s profiled")
    for label, file, function in PARTS:
        spent = cumulative(stats, file, function)
        print(f"  {label:42} {spent:7.3f} s {100 * spent / total:5.1f} %")


if __name__ == "__main__":
    main()
