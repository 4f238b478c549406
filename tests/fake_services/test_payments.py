from __future__ import annotations

import httpx
import pytest

from killpoint.fake_services import InProcessServices, NotFound, PaymentsClient, Rejected


@pytest.fixture
def payments(http: httpx.Client) -> PaymentsClient:
    return PaymentsClient(http)


def test_same_key_same_body_replays_without_a_new_effect(
    services: InProcessServices, payments: PaymentsClient
) -> None:
    first = payments.create_charge("key-1", "order-1", 1200, "EUR")
    again = payments.create_charge("key-1", "order-1", 1200, "EUR")
    assert again == first
    assert len(services.journal.applied_effects("payments", "order-1")) == 1
    assert [r.outcome for r in services.journal.requests()] == ["applied", "replayed"]
    assert services.journal.attempts("key-1") == 2


def test_same_key_different_body_is_rejected_with_422(
    services: InProcessServices, payments: PaymentsClient
) -> None:
    payments.create_charge("key-1", "order-1", 1200, "EUR")
    with pytest.raises(Rejected) as caught:
        payments.create_charge("key-1", "order-1", 9999, "EUR")
    assert caught.value.status == 422
    assert caught.value.body["error"] == "idempotency_key_reused"
    assert len(services.journal.applied_effects("payments")) == 1


def test_charge_without_a_key_is_applied_every_time(
    services: InProcessServices, http: httpx.Client
) -> None:
    body = {"order_id": "order-1", "amount_cents": 5, "currency": "EUR"}
    assert http.post("/payments/charges", json=body).status_code == 201
    assert http.post("/payments/charges", json=body).status_code == 201
    assert len(services.journal.applied_effects("payments", "order-1")) == 2


def test_charge_by_key_finds_the_charge_or_none(payments: PaymentsClient) -> None:
    assert payments.charge_by_key("key-1") is None
    charge = payments.create_charge("key-1", "order-1", 1200, "EUR")
    assert payments.charge_by_key("key-1") == charge


def test_refund_is_keyed_like_a_charge(
    services: InProcessServices, payments: PaymentsClient
) -> None:
    charge = payments.create_charge("key-1", "order-1", 1200, "EUR")
    refund = payments.refund("refund-1", charge.id, 1200)
    assert payments.refund("refund-1", charge.id, 1200) == refund
    assert payments.refund_by_key("refund-1") == refund
    assert payments.refund_by_key("refund-2") is None
    [effect] = services.journal.applied_effects("payments", business_key=charge.id)
    assert (effect.operation, effect.resource_id) == ("refund", refund.id)


def test_refund_cannot_exceed_the_charge(payments: PaymentsClient) -> None:
    charge = payments.create_charge("key-1", "order-1", 1000, "EUR")
    payments.refund("refund-1", charge.id, 600)
    with pytest.raises(Rejected) as caught:
        payments.refund("refund-2", charge.id, 600)
    assert caught.value.body["error"] == "refund_exceeds_charge"


def test_refund_of_an_unknown_charge_is_not_found(payments: PaymentsClient) -> None:
    with pytest.raises(NotFound):
        payments.refund("refund-1", "ch_missing", 1)


def test_invalid_body_is_rejected_and_still_journaled(
    services: InProcessServices, http: httpx.Client
) -> None:
    response = http.post("/payments/charges", json={"order_id": "", "amount_cents": -1})
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"
    [request] = services.journal.requests()
    assert (request.outcome, request.business_key) == ("rejected", None)
    assert services.journal.applied_effects() == []
