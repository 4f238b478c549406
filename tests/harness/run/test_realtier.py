"""The real-death tier: forked workers, SIGKILL, services over loopback HTTP, both stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from killpoint import scenarios
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.results import combine
from killpoint.harness.run.realtier import open_real_world, run_schedule_real
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint

pytestmark = pytest.mark.realtier


@pytest.fixture
def real_world(tmp_path: Path, store_url: str, checkpoint_key: bytes) -> Iterator[World]:
    with open_real_world(tmp_path / "real", store_url) as world:
        yield world


def test_worker_sigkilled_between_service_commit_and_receipt_recovers_without_second_effect(
    real_world: World,
) -> None:
    crash = HitPoint(worker=0, step="publish", boundary="transport.response_received")
    schedule = FaultSchedule(
        scenario="research_publish", run_id="sigkill", tier="real", crashes=(crash,)
    )
    history = run_schedule_real(real_world, scenarios.get("research_publish"), schedule, REFERENCE)

    first, second = history.workers
    assert first.end == "sigkill" and "signal 9" in first.reason
    # the service had committed the post when the worker died: it is in the journal ...
    post = next(a for a in history.applied if a.service == "cms")
    death_hit = [h for h in history.hits if h.worker == 0][-1]
    assert death_hit.boundary == "transport.response_received"
    assert post.seq <= death_hit.journal_seq
    # ... and the ledger had no receipt: the new worker reconciled instead of posting again
    assert second.end == "stopped" and history.final_status == "completed"
    assert any(h.boundary == "reconcile.resolved" for h in history.hits if h.worker == 1)
    assert sum(1 for a in history.applied if a.service == "cms") == 1
    assert combine(check_all(history, scenarios.get("research_publish").workflow)) is True


def test_every_boundary_of_a_scenario_is_crashed_by_sigkill_without_violation(
    real_world: World,
) -> None:
    scenario = scenarios.get("email")
    clean = run_schedule_real(
        real_world,
        scenario,
        FaultSchedule(scenario="email", run_id="clean", tier="real"),
        REFERENCE,
    )
    hits = [h for h in clean.hits if h.worker == 0]
    assert len(hits) > 5
    for n, hit in enumerate(hits):
        point = HitPoint(worker=0, step=hit.step, boundary=hit.boundary, occurrence=hit.occurrence)
        schedule = FaultSchedule(scenario="email", run_id=f"s{n}", tier="real", crashes=(point,))
        history = run_schedule_real(real_world, scenario, schedule, REFERENCE)
        assert history.workers[0].end == "sigkill", hit.label()
        verdicts = check_all(history, scenario.workflow)
        assert combine(verdicts) is True, (hit.label(), verdicts)


def _children() -> set[int]:
    import os

    tasks = Path(f"/proc/{os.getpid()}/task")
    return {int(pid) for t in tasks.iterdir() for pid in (t / "children").read_text().split()}


def test_a_worker_forked_ahead_for_a_crash_that_never_comes_is_dismissed(
    real_world: World,
) -> None:
    """A worker scheduled to die has its successor forked ahead to set up; when the crash
    point is never reached, the successor is sent away, and no process is left behind."""
    before = _children()
    never = HitPoint(worker=0, step="no_such_step", boundary="step.begin")
    schedule = FaultSchedule(scenario="email", run_id="never", tier="real", crashes=(never,))
    history = run_schedule_real(real_world, scenarios.get("email"), schedule, REFERENCE)
    assert [w.end for w in history.workers] == ["stopped"]
    assert history.final_status == "completed"
    assert _children() == before
