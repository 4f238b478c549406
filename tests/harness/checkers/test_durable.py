"""durable_outcome on hand-built histories: the last worker's word against the durable end."""

from __future__ import annotations

from killpoint.harness.checkers.durable import check_durable_outcome
from killpoint.harness.history import History
from killpoint.harness.protocol import AuditedControl, QueuedRun
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    WORKFLOW,
    completed_run,
    schedule,
    unreadable,
    worker,
)


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


def _operated(**changes: object) -> History:
    """The good run, in which the operator's reconcile acted: checkpoint #4 is its commit."""
    fields: dict[str, object] = {
        "claimed_status": "completed",
        "schedule": schedule(controls=["reconcile"]),
        "controls": ["reconcile: running"],
        "audit": [
            AuditedControl(
                control="reconcile",
                actor="killpoint-operator",
                at=4.0,
                from_sequence=3,
                to_sequence=4,
                to_status="running",
                fencing_token=1,
            )
        ],
    }
    return completed_run(**{**fields, **changes})


def test_a_control_the_audit_trail_holds_under_its_own_token_is_true() -> None:
    assert check_durable_outcome(_operated(), WORKFLOW).valid is True
    refused = _operated(controls=["reconcile refused: no"], audit=[])
    assert check_durable_outcome(refused, WORKFLOW).valid is True  # it did nothing to audit
    died = _operated(controls=["reconcile: in flight"], audit=[])
    assert check_durable_outcome(died, WORKFLOW).valid is True  # it may not have acted


def test_a_control_that_acted_and_left_no_audit_row_is_false() -> None:
    verdict = check_durable_outcome(_operated(audit=[]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "the operator's reconcile acted, and the engine's audit trail does not hold it"
    )


def test_a_control_whose_checkpoint_is_under_another_token_is_false() -> None:
    history = _operated()
    assert history.audit is not None
    stolen = [history.audit[0].model_copy(update={"fencing_token": 7})]
    verdict = check_durable_outcome(history.model_copy(update={"audit": stolen}), WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=4)]


def test_a_control_applied_to_an_engine_without_an_audit_reader_is_unknown() -> None:
    verdict = check_durable_outcome(_operated(audit=None), WORKFLOW)
    assert verdict.valid == "unknown"
