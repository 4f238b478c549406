"""The plan alone against the plan with exploration: runs and seconds until each mutant is caught.

Each mutant of the catalogue is hunted over the whole catalogue twice, as `killpoint mutants`
hunts it: with `--explore 0` (the systematic plan: recordings, named cases, single crashes,
network faults, pairs, doubles) and with the main job's exploration (the same plan, the
generated schedules after the network faults). Runs are the hunt's own count up to the first
run judged false; seconds are the hunt's wall time to that run, in one process. A mutant the
plan misses costs the whole plan (about 3,200 runs) before it is called escaped.

    python benchmarks/exploration.py [--mutant NAME ...] [--scenario NAME ...] [--explore RUNS]
                                     [--out FILE]

(It is the sibling of `detection.py`, which compares the plan's single crashes with random
kills; that module is at the length cap.)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from killpoint.harness.campaign.hunt import hunt_outcome
from killpoint.harness.options import EXPLORE, CampaignOptions
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS


def detect(name: str, explore: str, root: Path, scenarios: list[str]) -> dict[str, Any]:
    """One hunt of mutant `name` over `scenarios`: caught, runs, seconds, by what."""
    started = time.perf_counter()
    chosen = [CATALOGUE[s] for s in scenarios]
    outcome = hunt_outcome(MUTANTS[name], chosen, root, CampaignOptions(explore=explore))
    result = outcome.result
    return {
        "caught": result.caught,
        "runs": result.runs_to_detection if result.caught else outcome.runs,
        "seconds": round(time.perf_counter() - started, 2),
        "checker": result.checker,
        "scenarios": scenarios if len(scenarios) < len(CATALOGUE) else "catalogue",
        "schedule": (
            f"{result.schedule.scenario}: {result.schedule.describe()}" if result.schedule else None
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutant", action="append", help="mutant to hunt (default all)")
    parser.add_argument("--explore", default=EXPLORE, help="the exploration budget compared")
    parser.add_argument("--out", type=Path, help="write the rows as JSON")
    parser.add_argument(
        "--scenario", action="append", help="hunt over these scenarios (default the catalogue)"
    )
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="killpoint-explore-bench-") as tmp:
        for name in args.mutant or list(MUTANTS):
            row = {"mutant": name}
            for label, budget in (("plan", "0"), ("explored", args.explore)):
                where = args.scenario or list(CATALOGUE)
                row[label] = detect(name, budget, Path(tmp) / f"{name}-{label}", where)
            rows.append(row)
            plan, explored = row["plan"], row["explored"]
            print(
                f"{name:40} plan {_cell(plan)}  plan+explore {_cell(explored)}",
                flush=True,
            )
    caught = {k: sum(r[k]["caught"] for r in rows) for k in ("plan", "explored")}
    print(
        f"caught: plan {caught['plan']}/{len(rows)}, plan+explore {caught['explored']}/{len(rows)}"
    )
    if args.out:
        args.out.write_text(json.dumps({"explore": args.explore, "rows": rows}, indent=2))
    return 0


def _cell(found: dict[str, Any]) -> str:
    what = "caught" if found["caught"] else "ESCAPED"
    return f"{what:7} {found['runs']:5} runs {found['seconds']:6.1f}s"


if __name__ == "__main__":
    sys.exit(main())
