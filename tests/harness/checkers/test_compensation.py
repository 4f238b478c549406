"""single_compensation on hand-built histories: the undos the journal shows for each effect,
whether or not the service applied them."""

from __future__ import annotations

from killpoint.fake_services.journal import RequestRecord
from killpoint.harness.checkers.compensation import check_compensation
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    WORKFLOW,
    completed_run,
    effect,
    request,
    unreadable,
)

CHARGE = effect(1, resource_id="ch_1")


def _refund(seq: int, key: str | None, outcome: str = "applied") -> RequestRecord:
    return request(seq, "refund", key="ch_1", idempotency_key=key, outcome=outcome)


def test_one_undo_retried_under_its_key_is_true() -> None:
    requests = [request(1), _refund(2, "r-1", "error_before_commit"), _refund(3, "r-1")]
    refund = effect(2, key="ch_1", operation="refund", idempotency_key="r-1")
    history = completed_run(requests=requests, applied=[CHARGE, refund])
    verdict = check_compensation(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "1 effect(s) compensated, each once"


def test_a_second_undo_the_service_refused_is_still_a_second_compensation() -> None:
    requests = [request(1), _refund(2, "r-1"), _refund(3, "r-2", "rejected")]
    refund = effect(2, key="ch_1", operation="refund", idempotency_key="r-1")
    verdict = check_compensation(
        completed_run(requests=requests, applied=[CHARGE, refund]), WORKFLOW
    )
    assert verdict.valid is False
    assert verdict.summary == "payments [ch_1] was compensated 2 times"
    assert verdict.refs == [
        EvidenceRef(kind="effect", index=1),
        EvidenceRef(kind="request", index=2),
        EvidenceRef(kind="request", index=3),
    ]


def test_undos_without_a_key_count_where_the_service_applied_them() -> None:
    requests = [request(1), _refund(2, None), _refund(3, None)]
    refunds = [effect(n, key="ch_1", operation="refund", idempotency_key=None) for n in (2, 3)]
    verdict = check_compensation(
        completed_run(requests=requests, applied=[CHARGE, *refunds]), WORKFLOW
    )
    assert verdict.valid is False
    retried = completed_run(requests=requests, applied=[CHARGE, refunds[0]])
    assert check_compensation(retried, WORKFLOW).valid is True


def test_the_effect_s_own_retries_are_not_its_compensations() -> None:
    again = request(2, key="ch_1", idempotency_key="other")
    history = completed_run(requests=[request(1), again], applied=[CHARGE])
    assert check_compensation(history, WORKFLOW).valid is True


def test_it_judges_from_the_journal_without_a_reader() -> None:
    requests = [request(1), _refund(2, "r-1"), _refund(3, "r-2")]
    history = unreadable(completed_run(requests=requests, applied=[CHARGE]))
    assert check_compensation(history, WORKFLOW).valid is False
