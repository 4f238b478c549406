"""What a real death costs: the real-tier pass's schedules run in both tiers, per run.

The in-process tier kills a worker by raising at a boundary: its `finally` blocks run and its
process's memory outlives it. The real tier (`run.realtier`) runs each worker in a forked
child that the kill-switch `SIGKILL`s: no cleanup, its memory gone, services over loopback
HTTP. This runs each scenario's real-tier pass (`campaign.real_pass`) — the same single-crash
schedules — once in each tier on the reference engine, after a warm-up, and prints the median
and total wall time per run, their ratio, the pass's size and what opening the real world
costs (its services' process), once per campaign or hunt.

    python benchmarks/real_pass.py [--scenario NAME ...] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.plan import clean
from killpoint.harness.campaign.real_pass import real_pass
from killpoint.harness.engines.reference import REFERENCE, ensure_key
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios import CATALOGUE


def timed(campaign: Campaign, scenario: Scenario, schedules: list[FaultSchedule]) -> list[float]:
    """Seconds per run of each schedule, judged as the campaign judges it."""
    seconds = []
    for schedule in schedules:
        started = time.perf_counter()
        result, _ = campaign.judge(scenario, schedule, "real")
        seconds.append(time.perf_counter() - started)
        if result.valid is False:
            raise SystemExit(f"the reference engine failed {schedule.describe()}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", help="scenario (default the catalogue)")
    parser.add_argument("--repeat", type=int, default=2, help="times each schedule runs")
    args = parser.parse_args(argv)
    ensure_key()
    chosen = [CATALOGUE[name] for name in args.scenario or CATALOGUE]
    inprocess: list[float] = []
    real: list[float] = []
    with tempfile.TemporaryDirectory(prefix="killpoint-real-bench-") as tmp:
        config = CampaignConfig(scenarios=chosen, workdir=Path(tmp), engine=REFERENCE)
        with Campaign(config) as campaign:
            started = time.perf_counter()
            campaign.world_for("real")
            opened = time.perf_counter() - started
            for scenario in chosen:
                _, recording = campaign.judge(scenario, clean(scenario).schedule, "clean")
                runs = [r.schedule for r in real_pass(scenario, recording)]
                in_process = [s.model_copy(update={"tier": "inprocess"}) for s in runs]
                timed(campaign, scenario, runs[:1] + in_process[:1])  # warm both worlds
                mine_in, mine_real = [], []
                for _ in range(args.repeat):
                    mine_in += timed(campaign, scenario, in_process)
                    mine_real += timed(campaign, scenario, runs)
                inprocess += mine_in
                real += mine_real
                print(
                    f"{scenario.name:28} {len(runs):2} runs  in-process "
                    f"{_ms(mine_in)}  real {_ms(mine_real)}  "
                    f"{statistics.median(mine_real) / statistics.median(mine_in):4.1f}x",
                    flush=True,
                )
    size = len(real) // args.repeat
    print(f"opening the real world (its services' process): {opened * 1000:.0f} ms, once")
    medians = statistics.median(inprocess), statistics.median(real)
    means = statistics.mean(inprocess), statistics.mean(real)
    print(
        f"per run, median: in-process {medians[0] * 1000:.0f} ms, real {medians[1] * 1000:.0f} "
        f"ms ({medians[1] / medians[0]:.1f}x); mean {means[0] * 1000:.0f} ms against "
        f"{means[1] * 1000:.0f} ms ({means[1] / means[0]:.1f}x)"
    )
    print(
        f"the pass over {len(chosen)} scenario(s): {size} runs, "
        f"{sum(real) / args.repeat:.1f} s real against {sum(inprocess) / args.repeat:.1f} s "
        f"for the same schedules in process"
    )
    return 0


def _ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:5.0f} ms"


if __name__ == "__main__":
    sys.exit(main())
