"""Which world and which runner a tier uses: the in-process one, or the real tier's forked
workers (imported only when asked for, since it starts processes and servers)."""

from __future__ import annotations

from pathlib import Path

from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, Tier

__all__ = ["open_world", "run_in_tier"]


def open_world(tier: Tier, workdir: Path, store_url: str | None) -> World:
    if tier == "real":
        from killpoint.harness.run.realtier import open_real_world

        return open_real_world(workdir, store_url)
    return World.open(workdir, store_url)


def run_in_tier(
    world: World, scenario: Scenario, schedule: FaultSchedule, engine: EngineSpec
) -> History:
    """Run a schedule in the tier it names (a replayed schedule keeps its tier)."""
    if schedule.tier == "real":
        from killpoint.harness.run.realtier import run_schedule_real

        return run_schedule_real(world, scenario, schedule, engine)
    return run_schedule(world, scenario, schedule, engine)
