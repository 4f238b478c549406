"""progress on hand-built histories. The end it judges is the one the engine's durable records
show; without a history reader, workers that never said it ended make it false, and workers
that say it ended leave it unknown (their word is no evidence)."""

from __future__ import annotations

from typing import Any

from killpoint.fake_services.faults import FaultPlan, FaultRule
from killpoint.harness.checkers.progress import check_progress
from killpoint.harness.history import History, WorkerRecord
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
    checkpoint,
    completed_run,
    hit,
    lie,
    lineage,
    read,
    request,
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
    assert verdict.summary == (
        "recovery needed 4 workers after the last fault (worker 0: killed): workers 1..4, "
        "worker 4 ended it completed; the bound is 3"
    )
    assert [r.index for r in verdict.refs] == [0, 1, 2, 3, 4]  # the fault's worker, then after


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
    assert verdict.summary.startswith(
        "recovery needed 4 workers after the start (no fault happened): workers 0..3,"
    )


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


def _recovers(planned: FaultSchedule, n: int, **happened: Any) -> bool | str:
    history = completed_run(schedule=planned, workers=_chain(n), **happened)
    return check_progress(history, WORKFLOW).valid


def test_a_fault_that_kills_no_worker_still_starts_the_count_of_recovery() -> None:
    """A clock jump whose boundary was hit, a deploy campaign's delivery, a lying start message
    delivered: each is a fault in worker 2, so workers 3..5 recover from it; the same six
    workers without it are too many."""
    at_two = HitPoint(worker=2, step="charge", boundary="effect.started")
    jumped = hit("effect.started", 20.0, worker=2, step="charge")
    for planned, happened in (
        (schedule(clock_jumps=[ClockJump(at=at_two, seconds=60)]), {"hits": [jumped]}),
        (schedule(deploys=[Deploy(from_worker=2, versions=BASE_VERSIONS, strategy="drain")]), {}),
        (schedule(lies=[Lie(worker=2, kind="amount")]), {"lies": [lie(worker=2)]}),
    ):
        assert _recovers(planned, 6, **happened) is True
        assert _recovers(planned, 7, **happened) is False


def test_a_scheduled_fault_that_never_happened_does_not_start_the_count() -> None:
    """A crash whose worker stopped before its boundary, a clock jump whose boundary no
    worker hit, a lie the engine could not take: none happened, so recovery counts from
    worker 0's death and workers 1..4 are one too many."""
    at_three = HitPoint(worker=3, step="charge", boundary="effect.started")
    planned = schedule(
        crashes=[CRASH, HitPoint(worker=2, step="charge", boundary="effect.started")],
        clock_jumps=[ClockJump(at=at_three, seconds=60)],
        lies=[Lie(worker=3, kind="amount")],
    )
    history = completed_run(
        schedule=planned, workers=_workers(5), lies=[lie(worker=3, delivered=False)]
    )
    verdict = check_progress(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.evidence[0] == "after the last fault (worker 0: killed)"
    fired = history.model_copy(
        update={"hits": [hit("effect.started", 30.0, worker=3, step="charge")]}
    )
    assert check_progress(fired, WORKFLOW).valid is True  # the jump in worker 3 did happen


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
    assert verdict.summary.startswith("recovery needed 5 workers after the last fault")
    assert [line.split(":")[0] for line in verdict.evidence[1:-1]] == [
        f"worker {w}" for w in (1, 2, 3, 4)
    ]
    assert verdict.evidence[-1] == "worker 5 ended it completed"
    assert [r.index for r in verdict.refs] == [0, 1, 2, 3, 4]


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


# -- the bound, as issue 27 found it doubted ------------------------------------------------

# a charge the service failed before committing: a network fault the journal shows
FAILED_CHARGE = FaultRule(
    service="payments", operation="create_charge", occurrence=1, mode="error_before_commit"
)


def _waits_then_faults(n: int) -> History:
    """Workers 0 and 1 stop waiting, worker 2 meets a failed charge (journal #3) and stops,
    workers 3.. stop too, and worker `n - 1` completes; no worker dies."""
    workers = [worker(w, status="running", journal_seq_end=w + 1) for w in range(n - 1)]
    workers.append(worker(n - 1, journal_seq_end=n + 1))
    return completed_run(
        schedule=schedule(network=FaultPlan.of(FAILED_CHARGE)),
        workers=workers,
        requests=[read(1), read(2), request(3, outcome="error_before_commit"), request(n + 1)],
    )


def test_a_network_fault_in_worker_2_then_worker_3_completing_is_true() -> None:
    """The issue's case: "recovery needed 4 workers after the last fault" counted workers 0..3
    as if no fault had happened, while the journal shows the last one in worker 2."""
    verdict = check_progress(_waits_then_faults(4), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "completed after 4 worker(s)"


def test_workers_that_do_nothing_after_a_network_fault_are_false_naming_it() -> None:
    verdict = check_progress(_waits_then_faults(7), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "recovery needed 4 workers after the last fault (worker 2: payments.create_charge "
        "error_before_commit): workers 3..6, worker 6 ended it completed; the bound is 3"
    )
    assert verdict.refs[0] == EvidenceRef(kind="request", index=3)


def test_the_bound_is_three_workers_after_a_death_counted_to_the_one_that_ended_it() -> None:
    """Worker 1 dies: workers 2..4 may recover (4 ends it), workers 2..5 may not."""
    died = [worker(0, status="running"), worker(1, "killed", None)]
    within = [*died, *(worker(w, status="running") for w in (2, 3)), worker(4)]
    beyond = [*died, *(worker(w, status="running") for w in (2, 3, 4)), worker(5)]
    crash = schedule(crashes=[HitPoint(worker=1, step="charge", boundary="effect.started")])
    assert check_progress(completed_run(schedule=crash, workers=within), WORKFLOW).valid is True
    verdict = check_progress(completed_run(schedule=crash, workers=beyond), WORKFLOW)
    assert verdict.valid is False
    assert "workers 2..5, worker 5 ended it completed" in verdict.summary


def test_a_worker_woken_after_the_end_recovered_nothing() -> None:
    """A start message redelivered after the end wakes worker 4, which finds the run done:
    recovery from worker 0's death took workers 1..3, ended by worker 3."""
    workers = [*_workers(4), worker(4)]
    redelivered = schedule(crashes=[CRASH], redeliver_after_end=True)
    history = completed_run(schedule=redelivered, workers=workers)
    assert check_progress(history, WORKFLOW).valid is True


def test_a_needs_review_stop_is_an_end_not_a_lack_of_progress() -> None:
    workers = [*_workers(3)[:-1], worker(2, status="needs_review")]
    history = completed_run(
        schedule=schedule(crashes=[CRASH]), workers=workers, final_status="needs_review"
    )
    assert check_progress(history, WORKFLOW).valid is True


def test_a_stop_for_a_person_the_store_shows_ends_the_count_of_recovery() -> None:
    """Worker 1 stops in needs_review; the operator reconciles and workers 2..4 finish the run.
    Recovery from worker 0's death ended at worker 1, as its checkpoint shows; a worker's word
    alone ends nothing, so without that checkpoint workers 1..4 are one too many."""
    workers = [worker(0, "killed", None), worker(1, status="needs_review")]
    workers += [worker(2, status="running"), worker(3, status="running"), worker(4)]
    good = lineage()
    stopped = checkpoint(3, "charged", status="needs_review", attempts_left=2)
    said = completed_run(
        schedule=schedule(crashes=[CRASH], controls=["reconcile"]),
        workers=workers,
        controls=["reconcile: running"],
    )
    shown = said.model_copy(update={"checkpoints": [*good[:2], stopped, good[3]]})
    assert check_progress(shown, WORKFLOW).valid is True
    verdict = check_progress(said, WORKFLOW)
    assert verdict.valid is False
    assert "workers 1..4, worker 4 ended it completed" in verdict.summary


def test_a_long_recovery_after_a_network_fault_the_journal_cannot_place_is_unknown() -> None:
    """A lost response leaves the journal as it would be without it: which worker it hit, the
    history cannot tell, so five workers after worker 0's death are not proof of a slow
    recovery."""
    lost = FaultRule(service="payments", operation="create_charge", mode="lost_response")
    history = completed_run(
        schedule=schedule(crashes=[CRASH], network=FaultPlan.of(lost)), workers=_workers(6)
    )
    verdict = check_progress(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary.endswith(
        "but the network fault(s) payments.create_charge:lost_response leave no trace "
        "of the worker they hit"
    )
