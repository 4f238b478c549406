"""verified_completion on hand-built histories: the read half from the journal, the validator
half from the outputs the final trusted checkpoint carries."""

from __future__ import annotations

from pydantic import JsonValue

from killpoint.contract.records import EffectStatus
from killpoint.fake_services.journal import RequestRecord
from killpoint.harness.checkers.completion import check_verified_completion
from killpoint.harness.history import ExpectedEffectRecord, History
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    GOOD_ORDER,
    WORKFLOW,
    checkpoint,
    completed_run,
    effect,
    ledger_row,
    lineage,
    read,
    request,
    unreadable,
)


def _final(outputs: dict[str, JsonValue]) -> list[CheckpointRecord]:
    """The good lineage, its last checkpoint carrying `outputs`."""
    *before, _ = lineage()
    return [*before, checkpoint(4, "verified", status="completed", outputs=outputs)]


def test_a_completion_read_back_with_valid_outputs_is_true() -> None:
    verdict = check_verified_completion(completed_run(), WORKFLOW)
    assert verdict.valid is True


def test_a_run_that_did_not_complete_claims_nothing() -> None:
    history = completed_run(requests=[request(1)], final_status="needs_review")
    verdict = check_verified_completion(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "not completed (needs_review)"


def test_a_worker_s_word_that_it_did_not_complete_is_no_evidence() -> None:
    """Without a reader, its end is what its worker said: an unread effect is then unknown."""
    history = completed_run(requests=[request(1)], final_status="needs_review")
    verdict = check_verified_completion(unreadable(history), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary.startswith("if it completed: completed without a read")


def test_a_worker_s_word_that_it_completed_is_held_against_it() -> None:
    """Durably still running, its last worker said completed: it declared an unread effect."""
    history = completed_run(
        requests=[request(1)], final_status="running", claimed_status="completed"
    )
    verdict = check_verified_completion(history, WORKFLOW)
    assert verdict.valid is False
    assert (
        verdict.evidence[-1]
        == "its last worker said completed; final status running in state verified"
    )


def test_completing_without_reading_the_effect_back_is_false_even_without_a_reader() -> None:
    history = completed_run(requests=[request(1)])
    for seen in (history, unreadable(history)):
        verdict = check_verified_completion(seen, WORKFLOW)
        assert verdict.valid is False
        assert verdict.summary == "completed without a read that saw payments [order-1]"
        assert verdict.refs == [EvidenceRef(kind="effect", index=1)]
        assert (
            verdict.evidence[0]
            == "applied #1: payments.create_charge [order-1] key=order-1/create_charge → ch_1"
        )


def test_a_failed_read_is_no_verification() -> None:
    history = completed_run(requests=[request(1), read(2, outcome="not_found")])
    assert check_verified_completion(history, WORKFLOW).valid is False


DRAFT_PUT = ExpectedEffectRecord(
    service="files", business_key="drafts/d.md", operation="put", verifiable=False
)
DRAFT_DELETE = ExpectedEffectRecord(service="files", business_key="drafts/d.md", operation="delete")


def _file(seq: int, operation: str, outcome: str = "applied") -> RequestRecord:
    return request(seq, operation, service="files", key="drafts/d.md", outcome=outcome)


def _deleted_draft(*reads: RequestRecord) -> History:
    """A run that wrote a draft, read it, deleted it, then made `reads`."""
    return completed_run(
        expected=[DRAFT_PUT, DRAFT_DELETE],
        requests=[_file(1, "put"), _file(2, "get", "ok"), _file(3, "delete"), *reads],
        applied=[
            effect(1, service="files", operation="put", key="drafts/d.md"),
            effect(2, service="files", operation="delete", key="drafts/d.md"),
        ],
    )


def test_a_delete_is_verified_by_a_later_read_that_finds_nothing() -> None:
    verdict = check_verified_completion(_deleted_draft(_file(4, "get", "not_found")), WORKFLOW)
    assert verdict.valid is True


def test_a_delete_seen_only_by_reads_before_it_is_not_verified() -> None:
    verdict = check_verified_completion(_deleted_draft(), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "completed without a read that saw files [drafts/d.md] deleted"
    assert verdict.refs == [EvidenceRef(kind="effect", index=2)]


def test_completing_with_an_output_its_validator_rejects_is_false() -> None:
    history = completed_run(checkpoints=_final({"validate_order": {"total": 0}}))
    verdict = check_verified_completion(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "completed with validate_order output that fails validation: total 0 is not positive"
    )
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=4)]


def test_without_a_history_reader_the_outputs_are_unknown_not_true() -> None:
    verdict = check_verified_completion(unreadable(completed_run()), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "no history reader" in verdict.summary and "validate_order" in verdict.summary


def test_a_final_checkpoint_without_the_validated_output_is_unknown() -> None:
    verdict = check_verified_completion(completed_run(checkpoints=_final({})), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "checkpoint #4 carries no output of validate_order"


def test_only_the_steps_on_the_way_to_the_final_state_need_an_output() -> None:
    # completed at `verified`: note_decline (on the declined branch) never ran
    assert check_verified_completion(completed_run(), WORKFLOW).valid is True
    # completed at `closed`: the run went through note_decline, whose output is missing
    order: dict[str, JsonValue] = {"validate_order": GOOD_ORDER}
    declined = completed_run(
        expected=[],
        requests=[request(1, outcome="declined")],
        applied=[],
        checkpoints=[
            checkpoint(1, "received"),
            checkpoint(2, "order_validated", outputs=order),
            checkpoint(3, "declined", outputs=order),
            checkpoint(4, "closed", status="completed", outputs=order),
        ],
        final_state="closed",
    )
    verdict = check_verified_completion(declined, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "checkpoint #4 carries no output of note_decline"


def test_completing_while_the_ledger_holds_an_effect_in_doubt_is_false() -> None:
    for status in (EffectStatus.UNKNOWN, EffectStatus.NEEDS_REVIEW):
        doubt = completed_run(effects=[ledger_row(status=status)], final_reason="forced")
        verdict = check_verified_completion(doubt, WORKFLOW)
        assert verdict.valid is False
        assert verdict.summary == f"completed while its ledger says charge/charge is {status}"
    settled = completed_run(effects=[ledger_row(status=EffectStatus.VERIFIED)])
    assert check_verified_completion(settled, WORKFLOW).valid is True
