"""The command-engine protocol measured against itself: an engine behind it is judged as the
same engine in process is. The reference engine as a command (`engines.as_command`) crashes at
every transport boundary of the whole catalogue with no violation, and the JSON-file example
engine gets the same verdicts run by run either way."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from killpoint.contract.boundaries import START_TAKEN
from killpoint.harness.campaign.launch import run_campaign
from killpoint.harness.catalogue import installed
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.command import Command
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import RunResult
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint

EXAMPLES = Path(__file__).parents[3] / "docs" / "examples"
BRIDGE = (sys.executable, "-m", "killpoint.harness.engines.as_command")


def as_command(ref: str, cwd: Path | None = None) -> EngineSpec:
    """The engine `ref` behind the command protocol, offering what it offers in process."""
    inprocess = load_engine(ref)
    command = Command(
        name=f"{ref} as a command",
        start=(*BRIDGE, ref),
        history=None if inprocess.reader is None else (*BRIDGE, ref),
        grant=(*BRIDGE, ref),
        cwd=cwd or Path.cwd(),
        clock="harness",
    )
    return command.spec(f"as-command:{ref}", lacks=sorted(inprocess.lacks))


def test_the_reference_as_a_command_is_crashed_at_every_transport_boundary_and_never_wrong(
    tmp_path: Path,
) -> None:
    engine, inprocess = as_command("reference"), load_engine("reference")
    crashed = 0
    with World.open(tmp_path / "world") as world:
        for name, scenario in installed().scenarios.items():
            plain = FaultSchedule(scenario=name, run_id=f"{name}-record")
            recorded = run_schedule(world, scenario, plain, engine)
            transport = [h for h in recorded.hits if h.boundary.startswith("transport.")]
            ours = run_schedule(world, scenario, plain, inprocess).hits
            assert [(h.step, h.boundary) for h in transport] == [
                (h.step, h.boundary) for h in ours if h.boundary.startswith("transport.")
            ], name  # the command's requests are the in-process engine's, one for one
            for n, hit in enumerate(transport):
                point = HitPoint(worker=0, step=hit.step, boundary=hit.boundary)
                point = point.model_copy(update={"occurrence": hit.occurrence})
                schedule = FaultSchedule(scenario=name, run_id=f"{name}-{n}", crashes=(point,))
                history = run_schedule(world, scenario, schedule, engine)
                if hit.occurrence == 1:  # a later one depends on the run's service delays
                    assert history.workers[0].end == "killed", (name, point.label())
                crashed += history.workers[0].end == "killed"
                wrong = [v for v in check_all(history, scenario.workflow) if v.valid is False]
                assert not wrong, (name, point.label(), [v.summary for v in wrong])
    assert crashed >= 30  # every scenario's requests, not a lucky few


def test_the_json_file_engine_is_judged_the_same_as_a_command_as_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    options: dict[str, Any] = {
        "double": False,
        "interleave": False,
        "named": False,
        "deploys": False,
        "operators": False,
        "lies": False,
        "neighbours": False,
        "pauses": False,
        "real_pass": False,
        "explore": "0",
    }
    ref = "json_file_engine:factory"
    inprocess = run_campaign("order_saga", engine=ref, workdir=tmp_path / "a", **options)
    command = run_campaign(
        "order_saga", engine=as_command(ref, EXAMPLES), workdir=tmp_path / "b", **options
    )

    def verdicts(runs: list[RunResult]) -> dict[str, dict[str, object]]:
        return {r.schedule.describe(): {v.checker: v.valid for v in r.verdicts} for r in runs}

    expected, got = verdicts(inprocess.runs), verdicts(command.runs)
    assert {k: got.get(k) for k in expected} == expected  # the same faults, the same verdicts
    # and one more boundary: where the command says it took its start message
    assert all(START_TAKEN in k for k in set(got) - set(expected)), set(got) - set(expected)
    assert any(False in run.values() for run in expected.values())  # it is caught either way
