"""single_effect on hand-built histories. Its evidence is the services' journals and the
status the run ended with, so it judges an engine without a history reader too, never
unknown."""

from __future__ import annotations

from killpoint.harness.checkers.single_effect import check_single_effect
from killpoint.harness.history import ExpectedEffectRecord
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    CHARGE,
    WORKFLOW,
    completed_run,
    effect,
    read,
    request,
    unreadable,
)

REFUND = ExpectedEffectRecord(service="payments", business_key="ch_1", operation="refund")
EMAIL = ExpectedEffectRecord(service="mailer", business_key="msg-1", irreversible=True)


def test_each_expected_effect_exactly_once_is_true() -> None:
    verdict = check_single_effect(completed_run(), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "1 effect(s), none repeated"


def test_an_effect_applied_twice_is_false_citing_both() -> None:
    history = completed_run(
        requests=[request(1), request(2), read(3)], applied=[effect(1), effect(2)]
    )
    verdict = check_single_effect(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "payments.create_charge [order-1] took effect 2 times"
    assert verdict.refs == [
        EvidenceRef(kind="effect", index=1),
        EvidenceRef(kind="effect", index=2),
    ]
    assert [line.split(":")[0] for line in verdict.evidence] == ["applied #1", "applied #2"]


def test_two_idempotency_keys_alike_but_for_their_tail_are_cited_apart() -> None:
    """A fresh key per worker keeps the operation's key as its head: the evidence must show
    the keys whole, or the two charges look as if they were sent under one key."""
    keys = [f"kp-2435f8d853a0c1d2e3f4a5b6c7d8e9f0a1b2c3d4-worker-{w}" for w in ("5f1c", "9e07")]
    history = completed_run(
        requests=[request(1, idempotency_key=keys[0]), request(2, idempotency_key=keys[1])],
        applied=[effect(1, idempotency_key=keys[0]), effect(2, idempotency_key=keys[1])],
    )
    verdict = check_single_effect(history, WORKFLOW)
    assert verdict.valid is False
    assert [key in line for line in verdict.evidence for key in keys] == [True, False, False, True]


def test_a_second_attempt_at_an_irreversible_action_is_false_even_if_it_failed() -> None:
    first = request(1, "send", service="mailer", key="msg-1")
    retry = request(2, "send", service="mailer", key="msg-1", outcome="error_before_commit")
    history = completed_run(
        expected=[EMAIL],
        requests=[first, retry],
        applied=[effect(1, service="mailer", operation="send", key="msg-1")],
    )
    verdict = check_single_effect(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("irreversible mailer [msg-1] was attempted 2 times")
    assert verdict.refs == [
        EvidenceRef(kind="request", index=1),
        EvidenceRef(kind="request", index=2),
    ]


def test_an_irreversible_action_the_service_can_be_asked_about_may_be_sent_again() -> None:
    # outbound can be searched: a second attempt after a first that never landed (proved
    # absent) sends one message; only a second message would be a duplicate
    searchable = ExpectedEffectRecord(service="outbound", business_key="msg-1", irreversible=True)
    first = request(1, "send", service="outbound", key="msg-1", outcome="timeout_before_commit")
    second = request(3, "send", service="outbound", key="msg-1")
    history = completed_run(
        expected=[searchable],
        requests=[first, request(2, "search", service="outbound", key="msg-1"), second],
        applied=[effect(1, service="outbound", operation="send", key="msg-1")],
    )
    assert check_single_effect(history, WORKFLOW).valid is True
    twice = history.model_copy(
        update={
            "applied": [
                *history.applied,
                effect(2, service="outbound", operation="send", key="msg-1"),
            ]
        }
    )
    assert (
        check_single_effect(twice, WORKFLOW).summary == "outbound.send [msg-1] took effect 2 times"
    )


def test_completing_without_the_expected_effect_is_false() -> None:
    verdict = check_single_effect(completed_run(applied=[]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "completed, but payments.create_charge [order-1] took effect 0 times"


def test_an_operation_named_the_steps_way_says_what_the_journal_holds_under_the_key() -> None:
    step_named = ExpectedEffectRecord(
        service="payments", business_key="order-1", operation="charge"
    )
    verdict = check_single_effect(completed_run(expected=[step_named]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "completed, but payments.charge [order-1] took effect 0 times"
    assert verdict.evidence[-1] == (
        "looked for operation 'charge'; the payments journal holds under [order-1]: "
        "create_charge x1"
    )


def test_a_run_that_did_not_complete_need_not_have_every_effect() -> None:
    history = completed_run(applied=[], final_status="needs_review")
    assert check_single_effect(history, WORKFLOW).valid is True


def test_a_compensated_saga_needs_its_effect_and_its_undo_once_each() -> None:
    saga = {"expected": [CHARGE, REFUND], "expected_status": "compensated"}
    charge, refund = effect(1), effect(2, key="ch_1", operation="refund")
    done = completed_run(**saga, applied=[charge, refund], final_status="compensated")
    assert check_single_effect(done, WORKFLOW).valid is True
    rolled_back = completed_run(**saga, applied=[charge], final_status="compensated")
    verdict = check_single_effect(rolled_back, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "compensated, but payments.refund [ch_1] took effect 0 times"


def test_without_a_history_reader_it_still_judges() -> None:
    assert check_single_effect(unreadable(completed_run()), WORKFLOW).valid is True
    twice = completed_run(applied=[effect(1), effect(2)])
    assert check_single_effect(unreadable(twice), WORKFLOW).valid is False


def test_without_a_reader_a_missing_effect_of_a_run_not_said_done_is_unknown() -> None:
    """Its worker said review; the run may still have completed: nothing durable shows."""
    history = unreadable(completed_run(applied=[], final_status="needs_review"))
    verdict = check_single_effect(history, WORKFLOW)
    assert verdict.valid == "unknown"
    said_done = unreadable(completed_run(applied=[]))
    assert check_single_effect(said_done, WORKFLOW).valid is False  # its word held against it


def test_a_worker_s_word_that_it_completed_holds_it_to_every_effect() -> None:
    history = completed_run(applied=[], final_status="running", claimed_status="completed")
    verdict = check_single_effect(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("completed (its worker's word), but payments.create_charge")
