from __future__ import annotations

import json
from dataclasses import replace

import httpx
import pytest

from killpoint.fake_services import (
    InProcessServices,
    NotFound,
    OutcomeUnknown,
    PaymentsClient,
    Rejected,
    realism,
)
from tests.support.service_faults import plan, rule


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


def test_same_key_different_body_is_stripes_400_idempotency_error(
    services: InProcessServices, payments: PaymentsClient
) -> None:
    payments.create_charge("key-1", "order-1", 1200, "EUR")
    with pytest.raises(Rejected) as caught:
        payments.create_charge("key-1", "order-1", 9999, "EUR")
    assert caught.value.status == 400
    assert caught.value.body["error"] == "idempotency_error"
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


def test_partial_refunds_are_each_applied_up_to_what_is_left_of_the_charge(
    services: InProcessServices, payments: PaymentsClient
) -> None:
    charge = payments.create_charge("key-1", "order-1", 1000, "EUR")
    payments.refund("refund-1", charge.id, 400)
    payments.refund("refund-2", charge.id, 400)
    with pytest.raises(Rejected) as caught:
        payments.refund("refund-3", charge.id, 400)
    assert (caught.value.status, caught.value.body["error"]) == (400, "refund_exceeds_remaining")
    assert caught.value.body["remaining_cents"] == 200
    payments.refund("refund-4", charge.id, 200)
    with pytest.raises(Rejected) as caught:
        payments.refund("refund-5", charge.id, 1)
    assert caught.value.body["error"] == "charge_already_refunded"
    assert len(services.journal.applied_effects("payments", business_key=charge.id)) == 3


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


def test_other_customers_already_hold_charges_under_the_runs_order_id(
    services: InProcessServices, payments: PaymentsClient
) -> None:
    mine = payments.create_charge("key-1", "order-1", 1200, "EUR")
    found = payments.charges_by_order("order-1")
    others = [c for c in found if c.id != mine.id]
    assert found[-1] == mine and 1 <= len(others) <= 2
    assert all(c.customer and c.customer != mine.customer for c in others)
    assert all(c.created_at < mine.created_at for c in others)
    # the world the run starts in, not its effects: only the run's charge is journaled
    assert [e.resource_id for e in services.journal.applied_effects()] == [mine.id]
    assert payments.charges_by_order("order-1") == found


def test_a_search_before_any_charge_already_finds_the_other_customers(
    payments: PaymentsClient,
) -> None:
    first = payments.charges_by_order("order-2")
    assert first and all(c.customer for c in first)
    mine = payments.create_charge("key-2", "order-2", 700, "EUR")
    assert payments.charges_by_order("order-2") == [*first, mine]


def test_without_the_rule_the_account_holds_only_the_runs_charges(
    payments: PaymentsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(realism, "ACTIVE", replace(realism.ACTIVE, other_customers=False))
    assert payments.charges_by_order("order-3") == []


def test_a_key_whose_first_request_is_still_in_flight_gets_stripes_409(
    services: InProcessServices, payments: PaymentsClient
) -> None:
    services.set_plan(plan(rule("payments", "create_charge", "slow", delay_s=60)))
    with pytest.raises(OutcomeUnknown):  # the client gave up; the server is still at it
        payments.create_charge("key-1", "order-1", 1200, "EUR")
    with pytest.raises(OutcomeUnknown) as caught:  # a 409 may yet apply: unknown, not refused
        payments.create_charge("key-1", "order-1", 1200, "EUR")
    assert caught.value.status == 409
    services.clock.advance(60)
    charge = payments.create_charge("key-1", "order-1", 1200, "EUR")
    assert [r.outcome for r in services.journal.requests()] == ["applied", "rejected", "replayed"]
    assert [e.resource_id for e in services.journal.applied_effects()] == [charge.id]


def test_a_slow_key_holds_back_only_itself(
    services: InProcessServices, payments: PaymentsClient
) -> None:
    services.set_plan(plan(rule("payments", "create_charge", "slow", delay_s=60)))
    with pytest.raises(OutcomeUnknown):
        payments.create_charge("key-1", "order-1", 1200, "EUR")
    assert payments.create_charge("key-2", "order-2", 1200, "EUR").order_id == "order-2"


def test_each_request_keeps_its_json_body_canonical_and_a_byte_body_none(
    services: InProcessServices, http: httpx.Client, payments: PaymentsClient
) -> None:
    """The oracle reads what a request carried (an amount, a target) from the journal's body."""
    payments.create_charge("key-1", "order-1", 1200, "EUR")
    http.post("/payments/charges", content=b"\xff not json")
    charge, raw = services.journal.requests()
    assert charge.body is not None
    assert json.loads(charge.body)["amount_cents"] == 1200
    assert charge.body == json.dumps(json.loads(charge.body), sort_keys=True, separators=(",", ":"))
    assert raw.body is None
