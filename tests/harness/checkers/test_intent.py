"""intent_applied on hand-built histories: bodies the journal fingerprinted against the intent
the ledger recorded, compared only where the evidence makes them comparable."""

from __future__ import annotations

from pydantic import JsonValue

from killpoint.fake_services.journal import RequestRecord, fingerprint
from killpoint.harness.checkers.intent import check_intent
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    CHARGE_ARGS,
    CHARGE_BODY,
    WORKFLOW,
    completed_run,
    ledger_row,
    read,
    request,
    unreadable,
)

REPRICED = fingerprint({**CHARGE_ARGS, "amount_cents": 3300})
ECHO: dict[str, JsonValue] = {"order_id": "order-1", "amount_cents": 3000, "status": "succeeded"}


def _charged(*bodies: str) -> list[RequestRecord]:
    return [*(request(seq, body=b) for seq, b in enumerate(bodies, 1)), read(len(bodies) + 1)]


def test_a_body_that_is_the_recorded_arguments_is_true() -> None:
    history = completed_run(requests=_charged(CHARGE_BODY), effects=[ledger_row()])
    verdict = check_intent(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "1 ledger row(s), each applied as recorded"


def test_one_key_delivered_with_two_bodies_is_false_even_without_a_reader() -> None:
    history = unreadable(completed_run(requests=_charged(CHARGE_BODY, REPRICED)))
    verdict = check_intent(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "one idempotency key reached payments with two different bodies"
    assert verdict.refs == [
        EvidenceRef(kind="request", index=1),
        EvidenceRef(kind="request", index=2),
    ]


def test_without_a_reader_and_one_body_per_key_it_is_unknown() -> None:
    verdict = check_intent(unreadable(completed_run(requests=_charged(CHARGE_BODY))), WORKFLOW)
    assert verdict.valid == "unknown"


def test_a_receipt_that_names_another_amount_than_the_intent_is_false() -> None:
    applied: dict[str, JsonValue] = {**ECHO, "amount_cents": 3300}
    history = completed_run(requests=_charged(REPRICED), effects=[ledger_row(receipt=applied)])
    verdict = check_intent(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "charge/charge: the service applied amount_cents=3300; the intent recorded "
        "amount_cents=3000"
    )


def test_a_body_the_adapter_shapes_its_own_way_is_judged_by_what_the_receipt_echoes() -> None:
    history = completed_run(requests=_charged("shaped"), effects=[ledger_row(receipt=ECHO)])
    assert check_intent(history, WORKFLOW).valid is True


def test_a_delivery_nothing_can_be_compared_with_is_unknown() -> None:
    history = completed_run(requests=_charged("shaped"), effects=[ledger_row(receipt={})])
    verdict = check_intent(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "nothing of charge/charge's delivery is comparable with its intent"


def test_a_content_addressed_upload_is_compared_by_its_address() -> None:
    data_sha = "a" * 64
    upload = request(
        1, "put", service="artifacts", key=data_sha, body=data_sha, idempotency_key=None
    )
    row = ledger_row(
        key="kp-up", service="artifacts", args={"sha256": data_sha, "content_b64": "YQ=="}
    )
    assert check_intent(completed_run(requests=[upload], effects=[row]), WORKFLOW).valid is True


def test_a_keyless_delivery_with_another_body_than_its_first_is_false() -> None:
    args: dict[str, JsonValue] = {"ref": "r-1", "content": "v1"}
    posts = [
        request(seq, "publish", service="publisher", key="r-1", body=b, idempotency_key=None)
        for seq, b in ((1, fingerprint(args)), (2, fingerprint({**args, "content": "v2"})))
    ]
    row = ledger_row(key="kp-pub", service="publisher", args=args)
    verdict = check_intent(completed_run(requests=posts, effects=[row]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [EvidenceRef(kind="request", index=2)]


def test_one_key_naming_two_argument_sets_in_the_ledger_is_false() -> None:
    rows = [ledger_row(), ledger_row(args={**CHARGE_ARGS, "amount_cents": 1}, operation_id="b")]
    history = completed_run(requests=_charged(CHARGE_BODY), effects=rows)
    verdict = check_intent(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "one idempotency key names two argument sets in the ledger"


def test_an_engine_that_keeps_no_ledger_is_unknown_not_true() -> None:
    verdict = check_intent(completed_run(ledger=False, effects=[]), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "the engine keeps no effect ledger: its intents are its own"
