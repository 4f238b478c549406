"""message_integrity on hand-built histories: a lying start message's marks in a request after
it, in the durable input, or in an approval make it false; a body the journal could not keep,
or checkpoints that do not show their input, make it unknown."""

from __future__ import annotations

from killpoint.contract.records import ApprovalRecord
from killpoint.fake_services.journal import fingerprint
from killpoint.harness.checkers.message_integrity import check_message_integrity
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    CHARGE_ARGS,
    WORKFLOW,
    checkpoint,
    completed_run,
    grant,
    lie,
    lineage,
    read,
    request,
    unreadable,
)

FORGED = "forged-approver@lie.example.test"


def _told(*lies: object, **changes: object) -> History:
    """The good run, its charge's body journaled, its checkpoints showing the input, told
    `lies` (after journal #1 by default: the charge came before them)."""
    fields: dict[str, object] = {
        "lies": list(lies) or [lie()],
        "requests": [request(1, sent=CHARGE_ARGS), read(2)],
        "checkpoints": [c.model_copy(update={"input": {"total": 30}}) for c in lineage()],
    }
    return completed_run(**{**fields, **changes})


def test_a_run_told_no_lie_is_true() -> None:
    assert check_message_integrity(completed_run(), WORKFLOW).valid is True
    assert check_message_integrity(unreadable(completed_run()), WORKFLOW).valid is True


def test_a_lie_nothing_after_it_carries_is_true() -> None:
    assert check_message_integrity(_told(), WORKFLOW).valid is True


def test_a_request_after_the_lie_carrying_its_amount_is_false_citing_it() -> None:
    raised = {**CHARGE_ARGS, "amount_cents": 6001}
    history = _told(requests=[request(1, sent=CHARGE_ARGS), read(2), request(3, sent=raised)])
    verdict = check_message_integrity(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "a request carried what a lying start message (amount) said"
    assert verdict.refs == [EvidenceRef(kind="request", index=3)]
    assert verdict.evidence[1].endswith("carries 6001")


def test_a_target_in_a_business_key_counts_case_aside_and_only_after_the_lie() -> None:
    renamed = lie("target", ("order-1-EDITED",), journal_seq=1)
    after = _told(renamed, requests=[request(1), read(2, key="order-1-edited")])
    assert check_message_integrity(after, WORKFLOW).valid is False
    before = _told(lie("target", ("order-1-edited",), journal_seq=2), requests=after.requests)
    assert check_message_integrity(before, WORKFLOW).valid is True


def test_a_fraction_or_a_flag_is_no_amount() -> None:
    history = _told(
        lie(marks=(1,)), requests=[request(1), request(2, sent={"paid": True, "fee": 1.0})]
    )
    assert check_message_integrity(history, WORKFLOW).valid is True


def test_a_durable_input_that_took_the_lie_is_false() -> None:
    one, two, three, four = lineage()
    taken = three.model_copy(update={"input": {"order_id": "order-1", "amount_cents": 6001}})
    verdict = check_message_integrity(_told(checkpoints=[one, two, taken, four]), WORKFLOW)
    assert verdict.valid is False
    assert (
        verdict.summary == "the run's durable input took what a lying start message (amount) said"
    )
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=3)]


def test_an_output_derived_from_the_lie_is_false_but_not_on_an_untrusted_checkpoint() -> None:
    derived = checkpoint(4, "verified", status="completed", outputs={"validate": {"t": 6001}})
    kept = _told(checkpoints=[*lineage()[:3], derived])
    assert check_message_integrity(kept, WORKFLOW).valid is False
    untrusted = derived.model_copy(update={"trusted": False})
    refused = _told(checkpoints=[*lineage()[:3], untrusted])
    assert check_message_integrity(refused, WORKFLOW).valid == "unknown"  # no input shown


def test_an_approval_a_message_claimed_is_false() -> None:
    forged = ApprovalRecord(
        workflow_id="tiny_order:1", gate="charge_ok", status="granted", actor=FORGED
    )
    claim = lie("approval", (FORGED,))
    verdict = check_message_integrity(_told(claim, approvals=[forged]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "an approval was taken from a lying start message (approval)"
    assert verdict.evidence[1] == f"approval 'charge_ok' holds {FORGED!r}"


def test_an_approval_no_grant_gave_is_false_once_a_message_claimed_one() -> None:
    held = ApprovalRecord(
        workflow_id="tiny_order:1", gate="charge_ok", status="granted", actor="someone"
    )
    claim = lie("approval", (FORGED,))
    verdict = check_message_integrity(_told(claim, approvals=[held]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.evidence[1] == "approval 'charge_ok' was granted by no one"
    granted = _told(claim, approvals=[held], grants=[grant("charge_ok", 0.5, 10.0)])
    assert check_message_integrity(granted, WORKFLOW).valid is True


def test_a_body_the_journal_could_not_keep_after_the_lie_is_unknown() -> None:
    upload = request(3, "put", service="files", key="drafts/1", body=fingerprint(b"x"))
    history = _told(requests=[request(1, sent=CHARGE_ARGS), read(2), upload])
    verdict = check_message_integrity(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert "a body the journal does not keep (bytes)" in verdict.summary


def test_without_the_durable_input_it_is_unknown() -> None:
    unseen = _told(checkpoints=lineage())
    verdict = check_message_integrity(unseen, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "the engine's checkpoints do not show its durable input"
    assert check_message_integrity(unreadable(_told()), WORKFLOW).valid == "unknown"


def test_a_lie_not_delivered_or_saying_nothing_is_unknown() -> None:
    untold = check_message_integrity(
        _told(lie("tenant", ("x-tenant-b",), delivered=False)), WORKFLOW
    )
    assert untold.valid == "unknown"
    assert untold.summary == "this engine cannot take a lie of kind tenant"
    blank = check_message_integrity(_told(lie(marks=())), WORKFLOW)
    assert blank.valid == "unknown"


def test_a_violation_beats_what_is_unknown() -> None:
    raised = request(3, sent={"amount_cents": 6001})
    history = unreadable(_told(requests=[request(1), read(2), raised]))
    assert check_message_integrity(history, WORKFLOW).valid is False


# -- the mutation score's survivors (issue 26, point 7) -------------------------------------

RAISED = {**CHARGE_ARGS, "amount_cents": 6001}


def test_a_lie_never_delivered_convicts_nothing_that_matches_it() -> None:
    """The engine could not take the lie: a request that happens to carry its amount is no
    proof that anyone acted on it."""
    requests = [request(1, sent=CHARGE_ARGS), read(2), request(3, sent=RAISED)]
    verdict = check_message_integrity(_told(lie(delivered=False), requests=requests), WORKFLOW)
    assert verdict.valid == "unknown"


def test_an_approval_outside_the_harness_s_grants_is_judged_only_once_a_message_claimed_one() -> (
    None
):
    held = ApprovalRecord(
        workflow_id="tiny_order:1", gate="charge_ok", status="granted", actor="someone"
    )
    assert check_message_integrity(_told(approvals=[held]), WORKFLOW).valid is True


def test_every_trusted_checkpoint_is_searched_after_an_untrusted_one() -> None:
    one, two, three, four = lineage()
    shown = {"input": {"total": 30}}
    odd = two.model_copy(update={"trusted": False, **shown})
    taken = three.model_copy(update={"input": {"amount_cents": 6001}})
    history = _told(checkpoints=[one.model_copy(update=shown), odd, taken, four])
    verdict = check_message_integrity(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=3)]


def test_every_approval_held_is_searched_after_a_clean_one() -> None:
    clean = ApprovalRecord(
        workflow_id="tiny_order:1", gate="ship_ok", status="requested", actor="someone"
    )
    forged = ApprovalRecord(
        workflow_id="tiny_order:1", gate="charge_ok", status="granted", actor=FORGED
    )
    claim = lie("approval", (FORGED,))
    verdict = check_message_integrity(_told(claim, approvals=[clean, forged]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.evidence[1] == f"approval 'charge_ok' holds {FORGED!r}"
