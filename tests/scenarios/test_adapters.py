"""The adapters tell the truth about each service and translate its outcomes without loss."""

from __future__ import annotations

import hashlib

import httpx
import pytest

from killpoint.contract.errors import CannotTell, EffectRejected, OutcomeUnknown
from killpoint.contract.records import EffectIntent
from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, FilesClient, InProcessServices
from killpoint.scenarios.adapters import FINGERPRINT, adapters_for, artifact_args, file_args
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
        "outbound": (False, True, True),
        "publisher": (False, True, False),
        "artifacts": (True, True, False),
        "files": (True, True, True),
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


OUTBOUND = intent("outbound", "send", to="ada@example.test", subject="hi", body="b")


def test_outbox_lookup_takes_an_empty_search_as_absence_only_a_window_later(
    services: InProcessServices, http: httpx.Client
) -> None:
    outbound = adapters_for(http)["outbound"]
    with pytest.raises(OutcomeUnknown, match="not yet proof"):
        outbound.lookup(OUTBOUND, "kp-never-sent")
    services.clock.advance(1.0)
    with pytest.raises(OutcomeUnknown):
        outbound.lookup(OUTBOUND, "kp-never-sent")
    services.clock.advance(1.0)
    assert outbound.lookup(OUTBOUND, "kp-never-sent") is None


def test_outbox_a_send_starts_the_window_again(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(lose_response("outbound", "send"))
    outbound = adapters_for(http)["outbound"]
    with pytest.raises(OutcomeUnknown):
        outbound.lookup(OUTBOUND, "kp")
    services.clock.advance(5.0)  # the first empty search is old now: a send must not lean on it
    with pytest.raises(OutcomeUnknown):
        outbound.send(OUTBOUND, "kp")
    found = None
    while found is None:  # indexed within the window, and never taken for absent before
        try:
            found = outbound.lookup(OUTBOUND, "kp")
        except OutcomeUnknown:
            services.clock.advance(0.5)
    (sent,) = services.journal.applied_effects("outbound")
    assert found.resource_id == sent.resource_id
    assert found.detail[FINGERPRINT] == "kp"
    assert outbound.verify(OUTBOUND, found)


DRAFT = b"draft bytes"
WRITE = intent("files", "put", **file_args("drafts/d.md", DRAFT))
DELETE = intent("files", "delete", key="drafts/d.md", if_match=hashlib.sha256(DRAFT).hexdigest())


def test_files_a_write_is_found_by_its_hash_and_a_stranger_at_its_name_cannot_be_told(
    http: httpx.Client,
) -> None:
    files = adapters_for(http)["files"]
    assert files.lookup(WRITE, "kp") is None
    receipt = files.send(WRITE, "kp")
    assert files.send(WRITE, "kp") == receipt  # its own object already there: done
    assert files.lookup(WRITE, "kp") == receipt and files.verify(WRITE, receipt)
    FilesClient(http).put("drafts/d.md", b"someone else's")
    with pytest.raises(CannotTell):
        files.lookup(WRITE, "kp")
    with pytest.raises(EffectRejected):
        files.send(WRITE, "kp")


def test_files_a_delete_removes_only_the_version_it_names(http: httpx.Client) -> None:
    files = adapters_for(http)["files"]
    files.send(WRITE, "kp-write")
    assert files.lookup(DELETE, "kp") is None  # that version is still there
    receipt = files.send(DELETE, "kp")
    assert files.verify(DELETE, receipt) and files.lookup(DELETE, "kp") is not None
    assert files.send(DELETE, "kp") == receipt  # gone already: nothing else is deleted
    FilesClient(http).put("drafts/d.md", b"a newer draft")
    with pytest.raises(EffectRejected):
        files.send(DELETE, "kp")
    assert FilesClient(http).get("drafts/d.md") == b"a newer draft"
