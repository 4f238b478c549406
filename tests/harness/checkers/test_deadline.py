"""deadline_kept on hand-built histories: the journal half judges any engine (nothing sent past
the run's first start plus its time limit), the checkpoint half the time left each trusted
checkpoint carries against what the clock left."""

from __future__ import annotations

from typing import Any

from killpoint.harness.checkers.deadline import check_deadline
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    LIMITS,
    WORKFLOW,
    completed_run,
    lineage,
    read,
    request,
    unreadable,
    worker,
)

DAY_S = LIMITS.time_s  # worker 0 starts at t=0, checkpoint #1 at t=1: the deadline is DAY_S + 1


def _timed(cp: CheckpointRecord, left_s: float | None = None) -> CheckpointRecord:
    """`cp` with the time left the clock leaves at its time, or `left_s`."""
    left = DAY_S - cp.created_at if left_s is None else left_s
    return cp.model_copy(update={"budget": {**(cp.budget or {}), "time_left_ms": left * 1000}})


def _run(**changes: Any) -> Any:
    return completed_run(**{"checkpoints": [_timed(c) for c in lineage()], **changes})


def test_a_run_that_acts_within_its_deadline_and_counts_its_time_is_true() -> None:
    verdict = check_deadline(_run(), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == ("nothing sent after t=86401.0; no checkpoint counts more time left")


def test_a_request_sent_past_the_deadline_is_false_even_without_a_history_reader() -> None:
    """A downtime of two days, then the charge: the run acted a day late."""
    late = request(3, time=2 * DAY_S)
    history = unreadable(
        _run(requests=[read(1), late], workers=[worker(0), worker(1, started_at=2 * DAY_S)])
    )
    verdict = check_deadline(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "payments.create_charge was sent 86400s after the run's deadline "
        "(t=86400.0: its start t=0.0 + 86400s)"
    )
    assert verdict.refs == [EvidenceRef(kind="request", index=3)]


def test_a_read_past_the_deadline_is_no_violation() -> None:
    late_read = request(3, "charge_by_key", time=2 * DAY_S, outcome="ok")
    assert check_deadline(_run(requests=[request(1), late_read]), WORKFLOW).valid is True


def test_a_checkpoint_with_more_time_left_than_the_clock_left_is_false() -> None:
    """Down for an hour between checkpoints 2 and 3, and the hour not charged."""
    one, two, three, four = lineage()
    three = three.model_copy(update={"created_at": 3600.0 + 3})
    kept = _timed(three, left_s=DAY_S - 3)  # counted as if no time had passed while down
    history = _run(checkpoints=[_timed(one), _timed(two), kept, _timed(four, 0)])
    verdict = check_deadline(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "checkpoint #3 says 86397s of time left; the clock left 82798s: time the run spent "
        "was not counted"
    )
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=3)]


def test_rounding_within_the_tolerance_is_no_violation() -> None:
    one, two, three, four = lineage()
    rounded = _timed(three, left_s=DAY_S - three.created_at + 0.9)
    history = _run(checkpoints=[_timed(one), _timed(two), rounded, _timed(four)])
    assert check_deadline(history, WORKFLOW).valid is True


def test_an_untrusted_checkpoint_is_not_the_engine_s_word() -> None:
    one, two, three, four = lineage()
    forged = _timed(three, left_s=10 * DAY_S).model_copy(update={"trusted": False})
    history = _run(checkpoints=[_timed(one), _timed(two), forged, _timed(four)])
    assert check_deadline(history, WORKFLOW).valid is True


def test_without_a_time_budget_in_sight_it_is_unknown_not_true() -> None:
    bare = check_deadline(completed_run(), WORKFLOW)  # the budgets carry no time_left_ms
    assert bare.valid == "unknown"
    assert bare.summary == "trusted checkpoint #1 carries no time budget"
    blind = check_deadline(unreadable(_run()), WORKFLOW)
    assert blind.valid == "unknown"
    assert "no history reader" in blind.summary


def test_the_budget_begins_with_the_engine_s_first_checkpoint_not_a_delivery_it_lost() -> None:
    """Worker 0 died before the engine took the start message durably; worker 1, a minute later,
    made checkpoint #1 with the whole day left: that is when the run began."""
    shifted = [c.model_copy(update={"created_at": c.created_at + 60}) for c in lineage()]
    history = _run(
        checkpoints=[_timed(c, left_s=DAY_S - (c.created_at - 60)) for c in shifted],
        workers=[worker(0, end="killed", status=None), worker(1, started_at=60.0)],
    )
    verdict = check_deadline(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "nothing sent after t=86461.0; no checkpoint counts more time left"
    reset = [shifted[0], shifted[1], _timed(shifted[2], left_s=DAY_S), shifted[3]]
    assert check_deadline(_run(checkpoints=reset, workers=history.workers), WORKFLOW).valid is False


def _over_by(extra_ms: float) -> Any:
    """The good run whose checkpoint #3 counts `extra_ms` more time left than the clock left
    it (the deadline is t=DAY_S + 1, checkpoint #1's time)."""
    one, two, three, four = lineage()
    clock_left_ms = (DAY_S + 1 - three.created_at) * 1000
    over = three.model_copy(update={"budget": {"time_left_ms": clock_left_ms + extra_ms}})
    return _run(checkpoints=[_timed(one), _timed(two), over, _timed(four)])


def test_a_checkpoint_may_count_up_to_one_second_more_than_the_clock_left() -> None:
    """The tolerance is a second of rounding, in milliseconds: half a second over and exactly a
    second over are kept, a second and half a millisecond over is not."""
    assert check_deadline(_over_by(500), WORKFLOW).valid is True
    assert check_deadline(_over_by(1000), WORKFLOW).valid is True
    assert check_deadline(_over_by(1000.5), WORKFLOW).valid is False


def test_a_request_sent_within_a_second_of_the_deadline_is_no_violation() -> None:
    """The deadline is t=DAY_S + 1: sent at its tolerance's very end, the charge is in time."""
    on_time = request(3, time=DAY_S + 2)
    assert check_deadline(_run(requests=[read(1), on_time]), WORKFLOW).valid is True


def test_a_late_run_is_reported_by_its_first_late_request_and_cites_three() -> None:
    late = [request(n, time=DAY_S + 10 * n) for n in (3, 4, 5, 6)]
    verdict = check_deadline(_run(requests=[read(1), *late]), WORKFLOW)
    assert verdict.valid is False
    assert (verdict.summary or "").startswith("payments.create_charge was sent 29s after")
    assert len(verdict.evidence) == 4  # the deadline, then the first three late requests
    assert verdict.refs == [EvidenceRef(kind="request", index=n) for n in (3, 4, 5)]
