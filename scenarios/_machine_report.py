"""What the stateful machine hands back on a violation: the failure, kept for tests, and the
few lines a reader needs — the schedule's non-default fields and the command that replays it."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from killpoint.harness.catalogue import installed
from killpoint.harness.history import History
from killpoint.harness.results import Verdict
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, save_schedule

SCHEDULE_DIR_ENV = "KILLPOINT_SCHEDULE_DIR"
DEFAULT_SCHEDULE_DIR = Path(".hypothesis") / "killpoint"


@dataclass(frozen=True)
class Failure:
    """A violation the machine found: the schedule that reproduces it, and what it broke."""

    schedule: FaultSchedule
    history: History
    verdicts: list[Verdict]
    path: Path

    @property
    def violated(self) -> list[str]:
        return [v.checker for v in self.verdicts if v.valid is False]

    def faults(self) -> int:
        """How many faults the schedule injects (crashes, rules, jumps, tampers, deploys…)."""
        s = self.schedule
        return (
            len(s.crashes)
            + len(s.network.rules)
            + len(s.clock_jumps)
            + len(s.tamper)
            + len(s.deploys)
            + int(s.redeliver_start)
            + int(s.interleave is not None)
        )


def compact(schedule: FaultSchedule) -> str:
    """The schedule as one JSON line of its non-default fields (the file holds them all)."""
    return json.dumps(schedule.model_dump(mode="json", exclude_defaults=True), sort_keys=False)


def save(schedule: FaultSchedule) -> Path:
    """The schedule under `$KILLPOINT_SCHEDULE_DIR` (default `.hypothesis/killpoint`), named
    by its content so that the shrunk example's file is stable between runs."""
    text = schedule.model_dump_json(indent=2)
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    folder = Path(os.environ.get(SCHEDULE_DIR_ENV) or DEFAULT_SCHEDULE_DIR)
    return save_schedule(schedule, folder / f"{schedule.scenario}-{digest}.json")


def replay_lines(path: Path, schedule: FaultSchedule, scenario: Scenario) -> list[str]:
    """`killpoint replay FILE` when the CLI can rebuild the run from the file alone (the
    scenario is an installed catalogue's, the engine named by reference); else what it lacks."""
    command = f"killpoint replay {shlex.quote(str(path))}"
    if installed().scenarios.get(scenario.name) != scenario:
        return [
            f"replay: {command}  (once scenario {scenario.name!r} is registered in a "
            "killpoint.catalogues entry point; until then, Hypothesis's program)"
        ]
    if schedule.engine is None:
        return [f"replay: {command} --engine MODULE:FACTORY  (the engine was given as an object)"]
    return [f"replay: {command}"]


def summary(path: Path, schedule: FaultSchedule, scenario: Scenario) -> str:
    head = f"fault schedule ({schedule.describe()}): {compact(schedule)}"
    return "\n".join([head, *replay_lines(path, schedule, scenario)])
