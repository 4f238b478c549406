"""The adapters tell the truth about each service and translate its outcomes without loss."""

from __future__ import annotations

import httpx
import pytest

from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, InProcessServices
from killpoint.harness.contract.errors import CannotTell, EffectRejected, OutcomeUnknown
from killpoint.harness.contract.records import EffectIntent
from killpoint.scenarios.adapters import adapters_for, artifact_args
from tests.scenarios.conftest import lose_response


def intent(service: str, operation: str, **args: object) -> EffectIntent:
    return EffectIntent(operation=operation, service=service, args=args)


CHARGE = intent("payments", "charge", order_id="order-1", amount_cents=500, currency="EUR")
POST = intent("cms", "create_post", slug="post-1", title="T", body="B")
MAIL = intent("mailer", "send", to="ada@example.test", subject="hi", body="b")
PUBLICATION = intent("publisher", "publish", ref="ref-1", content="c")


def test_flags_are_the_truth_about_each_service(http: httpx.Client) -> None:
    flags = {
        name: (a.idempotent, a.queryable, a.irreversible) for name, a in adapters_for(http).items()
    }
    assert flags == {
        "payments": (True, True, False),
        "cms": (False, True, False),
        "mailer": (False, False, True),
        "publisher": (False, True, False),
        "artifacts": (True, True, False),
    }


def test_lost_response_is_outcome_unknown_and_lookup_finds_the_effect(
    services: InProcessServices, http: httpx.Client
) -> None:
    adapters = adapters_for(http)
    for service, operation, sent in (
        ("payments", "create_charge", CHARGE),
        ("cms", "create_post", POST),
        ("publisher", "publish", PUBLICATION),
    ):
        services.set_plan(lose_response(service, operation))
        with pytest.raises(OutcomeUnknown):
            adapters[service].send(sent, "kp-key-1")
        assert adapters[service].lookup(sent, "kp-key-1") is not None, service


def test_lookup_proves_absence_before_any_send(http: httpx.Client) -> None:
    adapters = adapters_for(http)
    assert adapters["payments"].lookup(CHARGE, "kp-never-sent") is None
    assert adapters["cms"].lookup(POST, "kp-never-sent") is None
    assert adapters["publisher"].lookup(PUBLICATION, "kp-never-sent") is None
    upload = intent("artifacts", "put", **artifact_args(b"never uploaded"))
    assert adapters["artifacts"].lookup(upload, "kp-never-sent") is None


def test_a_4xx_is_a_definite_rejection(http: httpx.Client) -> None:
    refund = intent("payments", "refund", charge_id="ch_missing", amount_cents=100)
    with pytest.raises(EffectRejected):
        adapters_for(http)["payments"].send(refund, "kp-refund")


def test_a_5xx_before_commit_is_unknown_not_rejected(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(
        FaultPlan.of(FaultRule(service="cms", occurrence=1, mode=FaultMode.ERROR_BEFORE_COMMIT))
    )
    with pytest.raises(OutcomeUnknown):
        adapters_for(http)["cms"].send(POST, "kp")


def test_mailer_cannot_tell_whether_a_message_went_out(http: httpx.Client) -> None:
    mailer = adapters_for(http)["mailer"]
    mailer.send(MAIL, "kp")
    with pytest.raises(CannotTell):
        mailer.lookup(MAIL, "kp")


def test_payments_retry_with_the_same_key_charges_once(
    services: InProcessServices, http: httpx.Client
) -> None:
    payments = adapters_for(http)["payments"]
    first = payments.send(CHARGE, "kp-same")
    again = payments.send(CHARGE, "kp-same")
    assert first.resource_id == again.resource_id
    assert len(services.journal.applied_effects("payments", "order-1")) == 1
    assert payments.verify(CHARGE, first)


def test_withheld_publication_is_present_but_not_yet_verified(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(
        FaultPlan.of(
            FaultRule(
                service="publisher",
                operation="publish",
                occurrence=1,
                mode=FaultMode.WITHHELD_VISIBILITY,
                params={"after_reads": 2},
            )
        )
    )
    publisher = adapters_for(http)["publisher"]
    receipt = publisher.send(PUBLICATION, "kp")
    assert publisher.lookup(PUBLICATION, "kp") is not None  # held, just not shown
    assert not publisher.verify(PUBLICATION, receipt)
    assert publisher.verify(PUBLICATION, receipt)


def test_artifact_upload_is_idempotent_by_content_hash(
    services: InProcessServices, http: httpx.Client
) -> None:
    artifacts = adapters_for(http)["artifacts"]
    upload = intent("artifacts", "put", **artifact_args(b"image bytes", "image/svg+xml"))
    receipt = artifacts.send(upload, "kp")
    artifacts.send(upload, "kp")
    assert len(services.journal.applied_effects("artifacts", receipt.resource_id)) == 1
    assert artifacts.verify(upload, receipt)
