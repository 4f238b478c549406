"""progress on hand-built histories. The end it judges is the one the engine's durable records
show; without a history reader, workers that never said it ended make it false, and workers
that say it ended leave it unknown (their word is no evidence)."""

from __future__ import annotations

from killpoint.harness.checkers.progress import check_progress
from killpoint.harness.history import WorkerRecord
from killpoint.harness.results import EvidenceRef
from killpoint.harness.run.world import BASE_VERSIONS
from killpoint.harness.schedule import (
    ClockJump,
    Deploy,
    FaultSchedule,
    HitPoint,
    Interleave,
    Lie,
    Tamper,
)
from tests.support.histories import (
    WORKFLOW,
    completed_run,
    schedule,
    tampering,
    unreadable,
    worker,
)

CRASH = HitPoint(worker=0, step="charge", boundary="effect.started")


def _workers(n: int) -> list[WorkerRecord]:
    """Worker 0 killed, then `n - 1` more, the last one completing."""
    rest = [worker(w, status="running") for w in range(1, n - 1)]
    return [worker(0, "killed", None), *rest, worker(n - 1)]


def test_a_run_that_recovers_soon_after_its_last_fault_is_true() -> None:
    history = completed_run(schedule=schedule(crashes=[CRASH]), workers=_workers(3))
    verdict = check_progress(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "completed after 3 worker(s)"


def test_a_run_left_without_a_terminal_state_is_false_citing_the_last_worker() -> None:
    history = completed_run(
        schedule=schedule(crashes=[CRASH]),
        workers=[worker(0, "killed", None), worker(1, "error", None, reason="boom")],
        final_status="running",
        final_state="order_validated",
    )
    verdict = check_progress(unreadable(history), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "no terminal state after 2 workers"
    assert verdict.evidence[-1] == "worker 1 ended error: boom"
    assert verdict.refs == [EvidenceRef(kind="worker", index=1)]


def test_needing_more_than_three_workers_after_the_last_fault_is_false() -> None:
    history = completed_run(schedule=schedule(crashes=[CRASH]), workers=_workers(5))
    verdict = check_progress(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "recovery needed 4 workers after the last fault"
    assert [r.index for r in verdict.refs] == [1, 2, 3, 4]


def test_a_run_without_faults_must_end_as_its_scenario_expects() -> None:
    history = completed_run(final_status="needs_review", workers=[worker(0, status="needs_review")])
    verdict = check_progress(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "a run without faults ended needs_review, expected completed"


def test_a_tampering_the_engine_could_not_stage_is_no_fault_to_recover_from() -> None:
    planned = schedule(tamper=[Tamper(after_worker=0, kind="flip_byte")])
    workers = [worker(w, status="running") for w in range(3)] + [worker(3)]
    staged = completed_run(schedule=planned, workers=workers, tampered=[tampering("flip_byte")])
    assert check_progress(staged, WORKFLOW).valid is True  # workers 1..3 after the tampering
    unstaged = staged.model_copy(
        update={"tampered": [tampering("flip_byte", sequence=None, applied=False)]}
    )
    verdict = check_progress(unstaged, WORKFLOW)
    assert verdict.valid is False  # nothing happened: all four workers count
    assert verdict.summary == "recovery needed 4 workers after the last fault"


def test_without_a_history_reader_an_end_the_workers_claim_is_unknown() -> None:
    history = completed_run(schedule=schedule(crashes=[CRASH]), workers=_workers(3))
    verdict = check_progress(unreadable(history), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "no durable record of its end" in verdict.summary
    too_long = completed_run(schedule=schedule(crashes=[CRASH]), workers=_workers(5))
    assert check_progress(unreadable(too_long), WORKFLOW).valid is False  # the bound still judges


def test_a_worker_that_says_its_run_ended_while_the_store_says_running_is_false() -> None:
    """Its last worker said dead-lettered; the durable records say the run is still running."""
    history = completed_run(
        schedule=schedule(crashes=[CRASH]),
        workers=[worker(0, "killed", None), worker(1, status="dead_lettered")],
        final_status="running",
        final_state="order_validated",
        claimed_status="dead_lettered",
    )
    verdict = check_progress(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "no terminal state after 2 workers"
    assert verdict.evidence[0] == (
        "2 worker(s) ran; final status running (dead_lettered, its last worker said)"
    )


def test_a_run_without_faults_may_end_where_its_operator_chose() -> None:
    """A person's terminate is not a fault, and not a failure to recover either."""
    ended = completed_run(
        schedule=schedule(controls=["terminate"]),
        final_status="failed",
        controls=["terminate: failed"],
        workers=[worker(0, status="failed")],
    )
    assert check_progress(ended, WORKFLOW).valid is True
    refused = ended.model_copy(update={"controls": ["terminate refused: no"]})
    assert check_progress(refused, WORKFLOW).valid is False


# -- the mutation score's survivors (issue 26, point 7) -------------------------------------


def _chain(n: int) -> list[WorkerRecord]:
    """`n` workers that each stopped, none killed, the last one completing."""
    return [*(worker(w, status="running") for w in range(n - 1)), worker(n - 1)]


def _recovers(planned: FaultSchedule, n: int) -> bool | str:
    return check_progress(completed_run(schedule=planned, workers=_chain(n)), WORKFLOW).valid


def test_a_fault_that_kills_no_worker_still_starts_the_count_of_recovery() -> None:
    """A clock jump, a deploy campaign's delivery, a lying start message: each is a fault in
    worker 2, so workers 3..5 recover from it; the same six workers without it are too many."""
    at_two = HitPoint(worker=2, step="charge", boundary="effect.started")
    for planned in (
        schedule(clock_jumps=[ClockJump(at=at_two, seconds=60)]),
        schedule(deploys=[Deploy(from_worker=2, versions=BASE_VERSIONS, strategy="drain")]),
        schedule(lies=[Lie(worker=2, kind="amount")]),
    ):
        assert _recovers(planned, 6) is True
        assert _recovers(planned, 7) is False


def test_a_plain_change_of_versions_is_no_fault_to_recover_from() -> None:
    plain = schedule(deploys=[Deploy(from_worker=2, versions=BASE_VERSIONS)])
    assert _recovers(plain, 3) is True
    assert _recovers(plain, 4) is False  # all four workers count


def test_a_racing_pair_is_a_fault_in_both_of_its_workers() -> None:
    """Two workers after worker 1 are workers 2 and 3: recovery is counted from worker 3."""
    raced = schedule(interleave=Interleave(after_worker=1))
    assert _recovers(raced, 7) is True
    assert _recovers(raced, 8) is False


def test_hung_workers_are_false_citing_the_first_three() -> None:
    hung = [worker(w, "hung", None, reason=f"no beat {w}") for w in range(4)]
    verdict = check_progress(completed_run(workers=[*hung, worker(4)]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "worker 0 hung: the harness killed it (no beat 0)"
    assert verdict.evidence == [f"worker {w} (worker-{w}): no beat {w}" for w in range(3)]
    assert [r.index for r in verdict.refs] == [0, 1, 2]


def test_a_slow_recovery_cites_the_first_four_workers_after_the_fault() -> None:
    history = completed_run(schedule=schedule(crashes=[CRASH]), workers=_workers(6))
    verdict = check_progress(history, WORKFLOW)
    assert verdict.summary == "recovery needed 5 workers after the last fault"
    assert [line.split(":")[0] for line in verdict.evidence] == [
        f"worker {w}" for w in (1, 2, 3, 4)
    ]
    assert [r.index for r in verdict.refs] == [1, 2, 3, 4]


def test_a_run_left_unended_cites_its_last_worker_of_many() -> None:
    rest = [worker(w, "error", None, reason=f"boom {w}") for w in range(1, 4)]
    history = completed_run(
        schedule=schedule(crashes=[CRASH]),
        workers=[worker(0, "killed", None), *rest],
        final_status="running",
    )
    verdict = check_progress(history, WORKFLOW)
    assert verdict.evidence[-1] == "worker 3 ended error: boom 3"
    assert verdict.refs == [EvidenceRef(kind="worker", index=3)]
