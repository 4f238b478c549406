"""durable_outcome on hand-built histories: the last worker's word against the durable end."""

from __future__ import annotations

from killpoint.harness.checkers.durable import check_durable_outcome
from killpoint.harness.protocol import QueuedRun
from killpoint.harness.results import EvidenceRef
from tests.harness.checkers.histories import WORKFLOW, completed_run, unreadable, worker


def test_a_worker_whose_word_is_the_durable_end_is_true() -> None:
    history = completed_run(claimed_status="completed")
    verdict = check_durable_outcome(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "completed, as its last worker said"


def test_a_last_worker_that_returned_nothing_has_nothing_to_compare() -> None:
    history = completed_run(workers=[worker(0, "killed", None)], claimed_status=None)
    assert check_durable_outcome(history, WORKFLOW).valid is True


def test_a_worker_that_says_dead_lettered_while_the_store_says_running_is_false() -> None:
    history = completed_run(
        workers=[worker(0, status="dead_lettered", reason="delivered 21 times")],
        final_status="running",
        final_state="order_validated",
        claimed_status="dead_lettered",
        claimed_state="order_validated",
        claimed_reason="delivered 21 times",
    )
    verdict = check_durable_outcome(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "its last worker said the run ended dead_lettered; the engine's durable records say running"
    )
    assert verdict.evidence == [
        "worker 0 returned dead_lettered in order_validated: delivered 21 times",
        "its latest trusted checkpoint: running in order_validated: ",
    ]
    assert verdict.refs == [EvidenceRef(kind="worker", index=0)]


def test_the_queue_is_cited_when_the_end_came_from_it() -> None:
    history = completed_run(
        final_status="quarantined",
        claimed_status="needs_review",
        queued=QueuedRun(workflow_id="tiny_order:1", reason="quarantined", detail="seal"),
        keeps_queue=True,
    )
    verdict = check_durable_outcome(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.evidence[-1].startswith("its operator queue: quarantined")


def test_without_a_history_reader_there_is_no_durable_end_to_compare() -> None:
    history = unreadable(completed_run(claimed_status="completed"))
    verdict = check_durable_outcome(history, WORKFLOW)
    assert verdict.valid == "unknown"
