"""The concurrency soak on PostgreSQL: N worker processes race over M workflows.

    .venv/bin/python benchmarks/soak.py                      # 8 procs x 200 workflows
    .venv/bin/python benchmarks/soak.py --procs 3 --workflows 20 --engine mutant:NAME

Prints transitions per second, lease acquisitions and takeovers (those of a holder paused at a
commit until overtaken), the refusals the workers met (lost compare-and-swap, stale fence, lease
held), and what the durable records show: forked lineages, stale writes (under a superseded
fencing token, or a checkpoint written over), duplicate effects, workflows left unsettled. Exit
1 when any of those is found.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from killpoint.harness.catalogue import installed
from killpoint.harness.engines.registry import load_engine

# The soak judges the reference store's own record of its writes: it is the reference engine's
# test tooling, kept with the tests (`tests/support/soak.py`), outside the wheel.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.soak import Soak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=8)
    parser.add_argument("--workflows", type=int, default=200)
    parser.add_argument("--scenario", default="order_saga")
    parser.add_argument("--engine", default=None, help="module:factory or mutant:NAME")
    parser.add_argument("--time-limit", type=float, default=240.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--db",
        default=os.environ.get(
            "KILLPOINT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
        ),
    )
    args = parser.parse_args()
    soak = Soak(
        load_engine(args.engine),
        installed().scenario(args.scenario),
        args.db,
        Path(tempfile.mkdtemp(prefix="killpoint-soak-")),
        procs=args.procs,
        workflows=args.workflows,
        time_limit_s=args.time_limit,
        seed=args.seed,
    )
    result = soak.run()
    print(f"soak: {args.procs} procs x {args.workflows} workflows of {args.scenario}")
    print("\n".join(result.lines()))
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
