"""The expensive report is built once, even when the worker dies right after recording it."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.contract.boundaries import ARTIFACT_RECORDED, ARTIFACT_UPLOADED
from killpoint.harness.contract.records import RunStatus
from killpoint.scenarios.expensive_reuse import SCENARIO, produced
from tests.scenarios.conftest import DieAt, Died, Harness


def test_crash_after_artifact_recorded_reuses_the_artifact(harness: Harness) -> None:
    workflow_id, _ = harness.start(SCENARIO, "reuse")
    with pytest.raises(Died):
        harness.engine(SCENARIO, DieAt(ARTIFACT_RECORDED)).resume(workflow_id)
    assert produced(workflow_id) == 1
    harness.after_death()

    outcome = harness.engine(SCENARIO).resume(workflow_id)  # a new worker

    assert outcome.status is RunStatus.COMPLETED, outcome.reason
    assert produced(workflow_id) == 1


def test_crash_before_the_artifact_is_recorded_builds_it_again(harness: Harness) -> None:
    # The counter does count: an upload the store never recorded is not known to the next worker.
    workflow_id, _ = harness.start(SCENARIO, "rebuild")
    with pytest.raises(Died):
        harness.engine(SCENARIO, DieAt(ARTIFACT_UPLOADED)).resume(workflow_id)
    harness.after_death()

    outcome = harness.engine(SCENARIO).resume(workflow_id)

    assert outcome.status is RunStatus.COMPLETED, outcome.reason
    assert produced(workflow_id) == 2


def test_marker_file_counts_builds_across_processes(harness: Harness, tmp_path: Path) -> None:
    marker = tmp_path / "built.txt"
    inp = {**SCENARIO.make_input("marker"), "marker_path": str(marker)}
    engine = harness.engine(SCENARIO)

    outcome = engine.run(SCENARIO.workflow.name, "wf-marker", inp)

    assert outcome.status is RunStatus.COMPLETED
    assert produced("wf-marker", marker) == 1
