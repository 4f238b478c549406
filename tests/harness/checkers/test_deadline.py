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
