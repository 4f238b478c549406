"""attempts_accounted on hand-built histories: the deliveries the journal relates to each ledger
row against the attempts the row spent and the budget allowed."""

from __future__ import annotations

from killpoint.contract.records import BudgetLimits
from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.fake_services.journal import RequestRecord
from killpoint.harness.checkers.attempts import check_attempts
from killpoint.harness.results import EvidenceRef
from killpoint.harness.schedule import HitPoint
from tests.support.histories import (
    WORKFLOW,
    completed_run,
    ledger_row,
    read,
    request,
    schedule,
    unreadable,
    worker,
)

CRASHED = schedule(crashes=[HitPoint(worker=0, step="charge", boundary="effect.started")])
RETRIED = [worker(0, "killed", None), worker(1)]


def _rule(mode: FaultMode, occurrence: int | None = 1) -> FaultRule:
    return FaultRule(
        service="payments", operation="create_charge", occurrence=occurrence, mode=mode
    )


def test_one_delivery_for_the_one_attempt_the_ledger_spent_is_true() -> None:
    verdict = check_attempts(completed_run(effects=[ledger_row(1)]), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "1 ledger row(s); no attempt the ledger did not spend"


def test_an_attempt_spent_and_never_sent_before_a_crash_is_true() -> None:
    history = completed_run(schedule=CRASHED, workers=RETRIED, effects=[ledger_row(2)])
    assert check_attempts(history, WORKFLOW).valid is True


def test_a_second_delivery_under_the_key_the_ledger_spent_once_is_false() -> None:
    requests = [request(1, outcome="error_before_commit"), request(2), read(3)]
    history = completed_run(requests=requests, effects=[ledger_row(1)])
    verdict = check_attempts(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "the services saw 2 attempts of charge/charge; its ledger spent 1: a send the ledger "
        "does not know of"
    )
    assert verdict.refs == [EvidenceRef(kind="request", index=2)]


def test_an_engine_that_sent_under_other_keys_is_counted_by_business_key() -> None:
    requests = [
        request(1, idempotency_key="k-worker-0"),
        request(2, idempotency_key="k-worker-1"),
        read(3),
    ]
    history = completed_run(requests=requests, effects=[ledger_row(1)])
    assert check_attempts(history, WORKFLOW).valid is False
    history = completed_run(requests=requests, effects=[ledger_row(2)])
    assert check_attempts(history, WORKFLOW).valid is True


def test_on_an_undisturbed_run_an_attempt_spent_and_not_sent_is_false() -> None:
    verdict = check_attempts(completed_run(effects=[ledger_row(2)]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "the ledger spent 2 attempts on charge/charge; the services saw 1, on a run nothing "
        "disturbed"
    )


def test_a_ledger_that_spent_more_than_the_budget_is_false() -> None:
    rows = [ledger_row(2), ledger_row(2, key="other", operation_id="charge/again")]
    history = completed_run(schedule=CRASHED, workers=RETRIED, effects=rows)
    verdict = check_attempts(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "the ledger spent 4 attempts; the budget allowed 3"


def test_one_operation_seen_more_often_than_the_budget_is_false_without_a_reader() -> None:
    sends = [request(seq, outcome="error_before_commit") for seq in (1, 2, 3, 4)]
    verdict = check_attempts(unreadable(completed_run(requests=sends)), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "the services saw 4 attempts of one operation; the budget allowed 3"
    assert verdict.refs == [EvidenceRef(kind="request", index=4)]


def test_without_a_history_reader_the_ledger_half_is_unknown() -> None:
    verdict = check_attempts(unreadable(completed_run()), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "no history reader" in verdict.summary


def test_a_copy_the_network_delivered_is_not_the_engine_s_attempt() -> None:
    copy = request(2, time=1.0, outcome="replayed")
    duplicated = schedule(network=FaultPlan.of(_rule(FaultMode.DUPLICATE_DELIVERY)))
    history = completed_run(
        schedule=duplicated, requests=[request(1), copy, read(3)], effects=[ledger_row(1)]
    )
    assert check_attempts(history, WORKFLOW).valid is True


def test_copies_that_a_retry_in_place_could_look_like_are_unknown() -> None:
    rules = FaultPlan.of(_rule(FaultMode.DUPLICATE_DELIVERY), _rule(FaultMode.ERROR_BEFORE_COMMIT))
    history = completed_run(
        schedule=schedule(network=rules),
        requests=[request(1, time=1.0), request(2, time=1.0), read(3)],
        effects=[ledger_row(1)],
    )
    verdict = check_attempts(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "charge/charge: 2 deliveries, some the network's"


def test_a_row_no_delivery_of_its_service_can_be_related_to_is_unknown() -> None:
    post = request(1, "create_post", service="cms", key="a-slug", idempotency_key=None)
    row = ledger_row(1, key="kp-1", service="cms", args={"slug": "another-slug"})
    verdict = check_attempts(completed_run(requests=[post], effects=[row]), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "no delivery of cms can be related to charge/charge"


def test_a_keyless_service_s_deliveries_are_related_by_the_business_key_in_the_arguments() -> None:
    posts = [
        request(seq, "create_post", service="cms", key="a-slug", idempotency_key=None)
        for seq in (1, 2)
    ]
    row = ledger_row(1, key="kp-1", service="cms", args={"slug": "a-slug"})
    verdict = check_attempts(completed_run(requests=posts, effects=[row]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [EvidenceRef(kind="request", index=2)]


def test_a_write_and_a_delete_of_one_name_are_each_their_own_row_s_deliveries() -> None:
    # sent without the ledger's keys, both share the object's name as their business key
    write, delete = (
        request(seq, op, service="files", key="drafts/d.md", idempotency_key=None)
        for seq, op in ((1, "put"), (2, "delete"))
    )
    rows = [
        ledger_row(1, key="kp-w", operation_id="w/put", service="files", intent="put",
                   args={"key": "drafts/d.md", "sha256": "a" * 64}),
        ledger_row(1, key="kp-d", operation_id="d/delete", service="files", intent="delete",
                   args={"key": "drafts/d.md", "if_match": "a" * 64}),
    ]  # fmt: skip
    verdict = check_attempts(completed_run(requests=[write, delete], effects=rows), WORKFLOW)
    assert verdict.valid is True, verdict


def test_an_engine_that_keeps_no_ledger_is_unknown_not_true() -> None:
    """A framework's reader shows its checkpoints but no ledger: no rows is not 'no excess'."""
    verdict = check_attempts(completed_run(ledger=False, effects=[]), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "the engine keeps no effect ledger: its attempts are its own"


ROOMY = BudgetLimits(attempts=10, steps=10)


def _tries(n: int) -> list[RequestRecord]:
    """n deliveries of the charge under its one key, the last one applied."""
    failed = [request(seq, outcome="error_before_commit") for seq in range(1, n)]
    return [*failed, request(n)]


def test_a_ledger_and_a_journal_that_spent_exactly_the_budget_are_true() -> None:
    """The budget is a bound, not a bound minus one: three attempts of three allowed."""
    history = completed_run(requests=_tries(3), effects=[ledger_row(3)])
    assert check_attempts(history, WORKFLOW).valid is True


def test_an_overspent_ledger_cites_three_of_its_rows() -> None:
    rows = [ledger_row(1, operation_id=f"step{n}/charge") for n in range(4)]
    verdict = check_attempts(completed_run(requests=[], effects=rows), WORKFLOW)
    assert verdict.valid is False
    assert len(verdict.evidence) == 3


def test_a_send_past_the_ledger_cites_the_row_and_its_first_three_deliveries() -> None:
    history = completed_run(limits=ROOMY, requests=_tries(5), effects=[ledger_row(1)])
    verdict = check_attempts(history, WORKFLOW)
    assert verdict.valid is False
    assert len(verdict.evidence) == 4
    assert verdict.refs == [EvidenceRef(kind="request", index=2)]


def test_attempts_spent_and_unsent_cite_the_row_and_two_of_its_deliveries() -> None:
    history = completed_run(limits=ROOMY, requests=_tries(3), effects=[ledger_row(4)])
    verdict = check_attempts(history, WORKFLOW)
    assert verdict.valid is False
    assert len(verdict.evidence) == 3
    assert verdict.refs == [
        EvidenceRef(kind="request", index=1),
        EvidenceRef(kind="request", index=2),
    ]


def test_of_several_rows_no_delivery_relates_to_the_first_is_the_doubt_reported() -> None:
    rows = [
        ledger_row(1, key="k1", args={"n": 1}, operation_id="first/charge"),
        ledger_row(1, key="k2", args={"n": 2}, operation_id="second/charge"),
    ]
    verdict = check_attempts(completed_run(effects=rows), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "first/charge" in verdict.summary


def test_an_attempt_spent_and_not_sent_under_a_network_fault_is_not_proved_unsent() -> None:
    """A fault between spending an attempt and sending it (a request the network lost) may
    explain the gap: only an undisturbed run proves an attempt went nowhere."""
    lossy = schedule(network=FaultPlan.of(_rule(FaultMode.LOST_REQUEST)))
    history = completed_run(schedule=lossy, effects=[ledger_row(2)])
    assert check_attempts(history, WORKFLOW).valid is True


def test_under_rules_a_retry_could_look_like_one_delivery_per_attempt_is_still_true() -> None:
    """The doubt is for deliveries past the ledger's attempts; as many as it spent are fine."""
    rules = FaultPlan.of(_rule(FaultMode.DUPLICATE_DELIVERY), _rule(FaultMode.ERROR_BEFORE_COMMIT))
    history = completed_run(schedule=schedule(network=rules), effects=[ledger_row(1)])
    assert check_attempts(history, WORKFLOW).valid is True


def test_a_rule_on_another_operation_of_the_service_does_not_hide_the_network_s_copies() -> None:
    refund = FaultRule(
        service="payments", operation="refund", occurrence=1, mode=FaultMode.ERROR_BEFORE_COMMIT
    )
    rules = FaultPlan.of(_rule(FaultMode.DUPLICATE_DELIVERY), refund)
    copy = request(2, time=1.0, outcome="replayed")
    history = completed_run(
        schedule=schedule(network=rules),
        requests=[request(1), copy, read(3)],
        effects=[ledger_row(1)],
    )
    assert check_attempts(history, WORKFLOW).valid is True
