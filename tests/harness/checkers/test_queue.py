"""operator_queue on hand-built histories: a run stopped for a person is in the engine's durable
queue, with a reason and the effects its ledger holds in doubt."""

from __future__ import annotations

from typing import Any

from killpoint.contract.records import EffectStatus
from killpoint.harness.checkers.queue import check_operator_queue
from killpoint.harness.history import History
from killpoint.harness.protocol import QueuedRun
from tests.support.histories import WORKFLOW, completed_run, ledger_row, unreadable

DOUBT = ledger_row(status=EffectStatus.NEEDS_REVIEW, receipt=None)


def _stopped(status: str = "needs_review", **changes: Any) -> History:
    """The run stopped for review at its charge, whose outcome its ledger holds in doubt."""
    fields: dict[str, Any] = {
        "final_status": status,
        "final_state": "order_validated",
        "final_reason": "charge in doubt",
        "claimed_status": status,
        "effects": [DOUBT],
        "keeps_queue": True,
        "queued": QueuedRun(
            workflow_id="tiny_order:1",
            reason=status,
            detail="charge in doubt",
            state="order_validated",
            in_doubt=["charge/charge"],
        ),
    }
    return completed_run(**{**fields, **changes})


def test_a_stopped_run_queued_with_its_reason_and_its_doubts_is_true() -> None:
    verdict = check_operator_queue(_stopped(), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "queued as needs_review, 1 effect(s) in doubt named"


def test_a_run_that_waits_for_no_one_needs_no_entry() -> None:
    assert check_operator_queue(completed_run(keeps_queue=True), WORKFLOW).valid is True


def test_a_stopped_run_missing_from_the_queue_is_false() -> None:
    verdict = check_operator_queue(_stopped("budget_exhausted", queued=None), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("it stopped for a person (budget_exhausted)")
    assert verdict.evidence[-1] == "operator queue: no entry for the run"


def test_a_worker_s_word_that_it_was_dead_lettered_is_held_against_the_queue() -> None:
    """The store says running, the worker said dead-lettered: no operator will ever see it."""
    history = _stopped(
        final_status="running", claimed_status="dead_lettered", queued=None, effects=[]
    )
    verdict = check_operator_queue(history, WORKFLOW)
    assert verdict.valid is False
    assert "dead_lettered (its last worker said; durably running)" in verdict.summary


def test_an_entry_without_a_reason_or_without_its_doubts_is_false() -> None:
    bare = _stopped()
    assert bare.queued is not None
    silent = bare.model_copy(update={"queued": bare.queued.model_copy(update={"detail": " "})})
    verdict = check_operator_queue(silent, WORKFLOW)
    assert verdict.valid is False
    assert (
        verdict.summary == "queued as needs_review with no reason: nothing for a person to act on"
    )
    blind = bare.model_copy(update={"queued": bare.queued.model_copy(update={"in_doubt": []})})
    verdict = check_operator_queue(blind, WORKFLOW)
    assert verdict.valid is False
    assert "without naming charge/charge" in verdict.summary


def test_an_engine_that_keeps_no_queue_or_no_reader_is_unknown() -> None:
    verdict = check_operator_queue(_stopped(keeps_queue=False, queued=None), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "keeps no operator queue" in verdict.summary
    no_reader = unreadable(_stopped(claimed_status=None, keeps_queue=False, queued=None))
    assert check_operator_queue(no_reader, WORKFLOW).valid == "unknown"
