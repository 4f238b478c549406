"""fencing on hand-built histories: the tokens committed checkpoints were written under, placed
in the workers whose span on the world clock holds them."""

from __future__ import annotations

from killpoint.harness.checkers.fencing import check_fencing
from killpoint.harness.history import History
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef
from killpoint.harness.schedule import HitPoint
from tests.support.histories import (
    WORKFLOW,
    checkpoint,
    completed_run,
    schedule,
    tampering,
    unreadable,
    worker,
)

CRASH = HitPoint(worker=0, step="charge", boundary="effect.started")


def _taken_over(*tokens: int, times: tuple[float, ...] = (1, 2, 3, 11)) -> History:
    """Worker 0 (t=0..5) writes #1-#3 and dies; worker 1 (t=10..15) writes #4."""
    states = ("received", "order_validated", "charged", "verified")
    cps = [
        checkpoint(n, state, fencing_token=token, created_at=t)
        for n, (state, token, t) in enumerate(zip(states, tokens, times, strict=True), 1)
    ]
    return completed_run(
        schedule=schedule(crashes=[CRASH]),
        workers=[worker(0, "killed", None), worker(1)],
        checkpoints=cps,
    )


def test_a_new_token_for_each_holder_is_true() -> None:
    verdict = check_fencing(_taken_over(0, 1, 1, 2), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "tokens 0..2, one holder each"


def test_a_token_that_falls_is_a_write_under_a_superseded_token() -> None:
    verdict = check_fencing(_taken_over(0, 2, 1, 3), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "checkpoint #3 landed under token 1 after #2 was written under 2: a superseded token"
    )
    assert verdict.refs == [
        EvidenceRef(kind="checkpoint", index=2),
        EvidenceRef(kind="checkpoint", index=3),
    ]


def test_a_takeover_that_keeps_the_old_holder_s_token_is_false() -> None:
    verdict = check_fencing(_taken_over(0, 1, 1, 1), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "token 1 was written under by two workers that ran apart: a takeover kept the old "
        "holder's token"
    )
    assert verdict.evidence == [
        "checkpoint #2 (order_validated) under token 1 at t=2.0",
        "checkpoint #4 (verified) under token 1 at t=11.0",
    ]


def test_one_token_inside_the_span_two_workers_share_is_consistent_with_either() -> None:
    pair = _taken_over(0, 1, 1, 1, times=(1, 3, 4, 4.5)).model_copy(
        update={"workers": [worker(0, "killed", None), worker(1, started_at=2.5)]}
    )
    assert check_fencing(pair, WORKFLOW).valid is True


def test_a_tampered_checkpoint_is_the_attacker_s_write_and_left_out() -> None:
    history = _taken_over(0, 2, 1, 3).model_copy(update={"tampered": [tampering("flip_byte")]})
    assert check_fencing(history, WORKFLOW).valid is True


def test_checkpoints_on_another_clock_are_not_placed_and_unknown() -> None:
    history = _taken_over(0, 1, 1, 2, times=(1e9, 1e9, 1e9, 1e9))
    verdict = check_fencing(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "checkpoint #1's time falls in no worker's span"


def test_without_tokens_or_a_reader_it_is_unknown() -> None:
    bare: list[CheckpointRecord] = [checkpoint(1, "received", fencing_token=None)]
    verdict = check_fencing(completed_run(checkpoints=bare), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "checkpoint #1 carries no fencing token"
    assert check_fencing(unreadable(completed_run()), WORKFLOW).valid == "unknown"


def test_a_checkpoint_at_the_very_start_or_end_of_a_span_is_placed_in_that_worker() -> None:
    """A span holds its own bounds: a write at the instant a worker starts or stops is its."""
    history = _taken_over(0, 1, 1, 2, times=(0, 2, 5, 10))
    assert check_fencing(history, WORKFLOW).valid is True


def test_a_token_each_of_two_overlapping_workers_used_alone_is_false() -> None:
    """The holders narrow write by write: a write both could have made does not excuse a write
    that only the other worker could have made under the same token."""
    shared = _taken_over(0, 1, 1, 1, times=(0.5, 1, 3, 11)).model_copy(
        update={"workers": [worker(0, "killed", None), worker(1, started_at=2)]}
    )
    verdict = check_fencing(shared, WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [
        EvidenceRef(kind="checkpoint", index=2),
        EvidenceRef(kind="checkpoint", index=4),
    ]


def test_the_evidence_of_a_kept_token_cites_its_first_write_and_the_other_holder_s() -> None:
    verdict = check_fencing(_taken_over(0, 1, 1, 1), WORKFLOW)
    assert verdict.refs == [
        EvidenceRef(kind="checkpoint", index=2),
        EvidenceRef(kind="checkpoint", index=4),
    ]


def test_a_token_that_falls_to_zero_is_a_superseded_token() -> None:
    """Token 0 is a token like any other, not a missing one."""
    verdict = check_fencing(_taken_over(1, 0, 2, 3), WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [
        EvidenceRef(kind="checkpoint", index=1),
        EvidenceRef(kind="checkpoint", index=2),
    ]


def test_one_holder_writing_twice_under_token_zero_is_true() -> None:
    assert check_fencing(_taken_over(0, 0, 1, 2), WORKFLOW).valid is True


def test_token_zero_kept_across_a_takeover_is_named_in_the_verdict() -> None:
    verdict = check_fencing(_taken_over(0, 0, 0, 0), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("token 0 was written under by two workers")


def test_a_token_that_falls_below_zero_after_token_zero_is_superseded() -> None:
    """The protocol bounds no token: an engine's counter that wraps below zero is a fall too."""
    assert check_fencing(_taken_over(0, -1, 1, 2), WORKFLOW).valid is False
