"""The timeline geometry: lanes, logical order, deaths, fault periods and evidence."""

from __future__ import annotations

import itertools
from pathlib import Path

from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint, Neighbour
from killpoint.reports.timeline import Lane, Timeline, build_timeline
from killpoint.scenarios import CATALOGUE
from tests.support.campaigns import sample_campaign
from tests.support.duplicate_charge import duplicate_charge_history, violation_verdict


def _timeline(refs: list[EvidenceRef] | None = None) -> tuple[History, Timeline]:
    run = next(r for r in sample_campaign().runs if r.history is not None)
    assert run.history is not None
    return run.history, build_timeline(
        run.history, violation_verdict().refs if refs is None else refs
    )


def _lane(timeline: Timeline, name: str) -> Lane:
    return next(lane for lane in timeline.lanes if lane.name.startswith(name))


def test_lanes_are_workers_then_store_then_services_in_order_of_first_request() -> None:
    _, t = _timeline()
    assert [lane.kind for lane in t.lanes] == ["worker", "worker", "store", "service", "service"]
    assert [lane.name for lane in t.lanes[2:]] == ["store", "payments", "publisher"]


def test_a_request_sits_between_the_hit_before_it_and_the_hit_that_saw_it() -> None:
    history, t = _timeline()
    hit_x = [m.x for lane in t.lanes[:2] for m in lane.marks]
    first_request = _lane(t, "payments").marks[0].x
    # request 1 was sent at hit 6 (effect.started) and seen by hit 7 (response_received)
    assert sorted(hit_x)[6] < first_request < sorted(hit_x)[7]
    assert history.hits[7].journal_seq == 1


def test_the_killed_worker_ends_in_a_death_mark_and_the_survivor_does_not() -> None:
    _, t = _timeline()
    w0, w1 = _lane(t, "w0"), _lane(t, "w1")
    assert [m.shape for m in w0.marks].count("death") == 1
    assert w0.marks[-1].shape == "death"
    assert "death" not in [m.shape for m in w1.marks]


def test_downtime_is_shaded_from_the_death_to_the_next_worker_start() -> None:
    _, t = _timeline()
    down = [b for b in t.bands if b.kind == "down"]
    assert len(down) == 1
    assert down[0].x == _lane(t, "w0").marks[-1].x
    assert down[0].x + down[0].width == _lane(t, "w1").marks[0].x


def test_a_network_faulted_request_is_ringed_and_shaded() -> None:
    _, t = _timeline()
    publish = _lane(t, "publisher").marks[0]
    assert "net-fault" in publish.classes
    assert [b.kind for b in t.bands].count("net") == 1


def test_requests_that_applied_an_effect_are_marked_applied() -> None:
    _, t = _timeline()
    assert all("applied" in m.classes for m in _lane(t, "payments").marks)
    assert "applied" not in _lane(t, "publisher").marks[0].classes


def test_checkpoints_pair_with_commit_hits_and_the_first_sits_at_the_start() -> None:
    _, t = _timeline()
    store = _lane(t, "store").marks
    assert [m.text for m in store] == ["1", "2", "3", "4"]
    assert store[0].x < min(m.x for m in _lane(t, "w0").marks)
    commits = [m.x for lane in t.lanes[:2] for m in lane.marks if "checkpoint.committed" in m.title]
    assert [m.x for m in store[1:]] == commits


def test_evidence_refs_are_highlighted_and_counted() -> None:
    _, t = _timeline()
    highlighted = [m for lane in t.lanes for m in lane.marks if "evidence" in m.classes]
    assert {m.shape for m in highlighted} == {"request", "death"}
    assert t.evidence_marks == 3
    assert _lane(t, "w0").evidence and not _lane(t, "w1").evidence


def test_without_refs_nothing_is_highlighted() -> None:
    _, t = _timeline(refs=[])
    assert t.evidence_marks == 0
    assert not any("evidence" in m.classes for lane in t.lanes for m in lane.marks)


def test_a_long_history_is_compressed_but_never_below_the_minimum_step() -> None:
    history = duplicate_charge_history(sample_campaign().runs[3].schedule)
    long = history.model_copy(update={"hits": history.hits * 100})
    t = build_timeline(long, [])
    assert t.step == 6.0
    assert t.width > 6.0 * len(long.hits)


def test_crowded_step_labels_take_two_rows_and_stay_whole_where_they_fit() -> None:
    _, t = _timeline()
    for lane in t.lanes:
        for row in (0, 1):
            labelled = [m for m in lane.marks if m.text and m.lift == row]
            for mark, after in itertools.pairwise(labelled):
                assert mark.x + len(mark.text) * 5.5 < after.x
    w0 = [m for m in _lane(t, "w0").marks if m.text]
    assert [m.lift for m in w0] == [0, 1]  # validate_order would run into charge
    assert [m.text for m in w0] == ["validate_order", "charge"]


def test_a_neighbour_has_a_lane_of_its_requests_where_they_fell_between_the_runs(
    tmp_path: Path,
) -> None:
    crash = HitPoint(worker=0, step="charge", boundary="transport.response_received")
    schedule = FaultSchedule(
        scenario="approval_refund",
        run_id="beside",
        crashes=(crash,),
        neighbours=(Neighbour(kind="tenant", before_worker=1),),
    )
    with World.open(tmp_path) as world:
        history = run_schedule(world, CATALOGUE["approval_refund"], schedule, REFERENCE)
    t = build_timeline(history, [])
    assert [lane.kind for lane in t.lanes][:4] == ["worker", "worker", "neighbour", "store"]
    lane = _lane(t, "tenant-b completed")
    (other,) = history.neighbours
    assert len(lane.marks) == len(other.requests)
    assert sum("applied" in m.classes for m in lane.marks) == len(other.applied)
    w0, w1 = (max(m.x for m in t.lanes[0].marks), min(m.x for m in t.lanes[1].marks))
    assert all(w0 < m.x < w1 for m in lane.marks)
    # the run's own requests only on the services' lanes
    on_services = sum(len(x.marks) for x in t.lanes if x.kind == "service")
    assert on_services == len(history.requests)


def test_each_worker_end_is_told_with_its_reason_not_only_in_the_lane_name() -> None:
    history, _ = _timeline()
    error = history.workers[1].model_copy(
        update={"end": "error", "status": None, "reason": "StaleFenceError: fencing token 2"}
    )
    t = build_timeline(history.model_copy(update={"workers": [history.workers[0], error]}), [])
    assert _lane(t, "w1").name == "w1 error"
    assert t.ends[1] == "w1 error: StaleFenceError: fencing token 2"
    assert t.ends[0].startswith("w0 killed")
