"""The expensive report is built once, even when the worker dies right after recording it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pydantic import JsonValue

from killpoint.contract.boundaries import ARTIFACT_RECORDED, ARTIFACT_UPLOADED
from killpoint.contract.records import RunStatus
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.scenarios.expensive_reuse import SCENARIO, produced
from tests.scenarios.conftest import crash, run


def counted(marker: Path) -> Scenario:
    """The scenario with every build also counted in a file of this test's own."""

    def make_input(run_id: str) -> dict[str, JsonValue]:
        return {**SCENARIO.make_input(run_id), "marker_path": str(marker)}

    return replace(SCENARIO, make_input=make_input)


def test_crash_after_artifact_recorded_reuses_the_artifact(world: World, tmp_path: Path) -> None:
    marker = tmp_path / "built.txt"
    history = run(
        world, counted(marker), "reuse", crashes=(crash("build_report", ARTIFACT_RECORDED),)
    )

    assert [w.end for w in history.workers] == ["killed", "stopped"]
    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    assert produced(history.workflow_id, marker) == 1


def test_crash_before_the_artifact_is_recorded_builds_it_again(
    world: World, tmp_path: Path
) -> None:
    # The counter does count: an upload the store never recorded is not known to the next worker.
    marker = tmp_path / "built.txt"
    history = run(
        world, counted(marker), "rebuild", crashes=(crash("build_report", ARTIFACT_UPLOADED),)
    )

    assert [w.end for w in history.workers] == ["killed", "stopped"]
    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    assert produced(history.workflow_id, marker) == 2


def test_builds_are_counted_in_this_process_and_in_the_marker_file(
    world: World, tmp_path: Path
) -> None:
    marker = tmp_path / "built.txt"
    workflow_id = f"{SCENARIO.name}:marker"
    before = produced(workflow_id)

    history = run(world, counted(marker), "marker")

    assert history.final_status == RunStatus.COMPLETED
    assert history.workflow_id == workflow_id
    assert produced(workflow_id, marker) == 1
    assert produced(workflow_id) == before + 1
