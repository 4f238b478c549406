"""The oracle's shared helpers: which deliveries belong to a ledger row, and how a delivery is
cited in a verdict's evidence."""

from __future__ import annotations

from killpoint.fake_services.journal import fingerprint
from killpoint.harness.checkers._common import cite_request, related
from tests.support.histories import ledger_row, request


def test_a_row_without_a_key_match_takes_its_business_key_s_deliveries_of_its_own_operation() -> (
    None
):
    """A file's write and its delete share the file's name: the operation tells them apart."""
    row = ledger_row(key="another-key", args={"order_id": "order-1"})
    mine = request(1, "charge", idempotency_key=None)
    other = request(2, "refund", idempotency_key=None)
    assert related(row, [mine, other]) == [mine]


def test_a_row_named_by_nothing_takes_the_deliveries_whose_body_is_its_arguments() -> None:
    row = ledger_row(key="another-key", args={"amount_cents": 5})
    same_body = request(1, key="x", idempotency_key=None, body=fingerprint({"amount_cents": 5}))
    other = request(2, key="y", idempotency_key=None, body="another body")
    assert related(row, [same_body, other]) == [same_body]


def test_a_delivery_is_cited_with_its_idempotency_key_only_when_it_carried_one() -> None:
    assert " key=order-1/create_charge " in cite_request(request(1))
    assert "key=" not in cite_request(request(2, idempotency_key=None))
