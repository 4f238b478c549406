"""Every fault mode, in-process, judged by the ground truth rather than by what the client saw."""

from __future__ import annotations

import time

import httpx
import pytest

from killpoint.fake_services import (
    CmsClient,
    InProcessServices,
    MailerClient,
    OutcomeUnknown,
    PaymentsClient,
)
from tests.support.service_faults import plan, rule


def test_lost_request_leaves_no_request_row_and_no_effect(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("payments", "create_charge", "lost_request")))
    with pytest.raises(OutcomeUnknown):
        PaymentsClient(http).create_charge("k", "order-1", 100, "EUR")
    assert services.journal.requests() == []
    assert services.journal.applied_effects() == []


def test_lost_response_applies_exactly_once_and_the_client_does_not_know(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("payments", "create_charge", "lost_response")))
    payments = PaymentsClient(http)
    with pytest.raises(OutcomeUnknown):
        payments.create_charge("k", "order-1", 100, "EUR")
    assert len(services.journal.applied_effects("payments", "order-1")) == 1
    assert payments.charge_by_key("k") is not None


def test_timeout_before_commit_saw_the_request_and_applied_nothing(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("cms", "create_post", "timeout_before_commit")))
    with pytest.raises(OutcomeUnknown) as caught:
        CmsClient(http).create_post("s", "t", "b")
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)
    [request] = services.journal.requests()
    assert request.outcome == "timeout_before_commit"
    assert services.journal.applied_effects() == []


def test_error_before_commit_is_a_5xx_with_nothing_applied(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("mailer", "send", "error_before_commit")))
    with pytest.raises(OutcomeUnknown) as caught:
        MailerClient(http).send("a@example.com", "s", "b")
    assert caught.value.status == 503
    assert [r.outcome for r in services.journal.requests()] == ["error_before_commit"]
    assert services.journal.applied_effects() == []


def test_error_after_commit_is_a_5xx_with_the_effect_applied(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("mailer", "send", "error_after_commit")))
    with pytest.raises(OutcomeUnknown) as caught:
        MailerClient(http).send("a@example.com", "s", "b")
    assert caught.value.status == 500
    assert [r.outcome for r in services.journal.requests()] == ["error_after_commit"]
    assert len(services.journal.applied_effects("mailer")) == 1


def test_slow_beyond_the_client_timeout_is_a_lost_response_without_sleeping(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("cms", "create_post", "slow", delay_s=60)))
    started = time.perf_counter()
    with pytest.raises(OutcomeUnknown):
        CmsClient(http).create_post("s", "t", "b")
    assert time.perf_counter() - started < 30  # far below the 60 s it would have slept
    assert len(services.journal.applied_effects("cms")) == 1


def test_slow_within_the_client_timeout_returns_normally(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("cms", "create_post", "slow", delay_s=0.9)))
    started = time.perf_counter()
    post = CmsClient(http).create_post("s", "t", "b")
    assert time.perf_counter() - started < 0.9  # in process, slowness is modelled, not slept
    assert post.slug == "s"


def test_duplicate_delivery_makes_two_cms_posts_but_one_response(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("cms", "create_post", "duplicate_delivery")))
    post = CmsClient(http).create_post("launch", "t", "b")
    assert post.id == "post_000001"
    assert services.journal.effects_by_business_key("cms") == {"launch": 2}


def test_duplicate_delivery_of_a_keyed_charge_applies_once(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("payments", "create_charge", "duplicate_delivery")))
    PaymentsClient(http).create_charge("k", "order-1", 100, "EUR")
    assert services.journal.attempts("k") == 2
    assert len(services.journal.applied_effects("payments")) == 1


def test_only_the_named_occurrence_is_faulted(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("mailer", "send", "lost_request", occurrence=2)))
    mailer = MailerClient(http)
    outcomes = []
    for n in range(3):
        try:
            mailer.send("a@example.com", f"s{n}", "b")
            outcomes.append("ok")
        except OutcomeUnknown:
            outcomes.append("info")
    assert outcomes == ["ok", "info", "ok"]
    assert len(services.journal.requests("mailer")) == 2


def test_the_in_process_transport_serves_the_services_host_alone(
    services: InProcessServices, http: httpx.Client
) -> None:
    assert http.get("/_admin/health").json() == {"status": "ok"}
    with pytest.raises(httpx.ConnectError, match=r"no fake service at elsewhere\.test"):
        http.get("http://elsewhere.test/_admin/health")
