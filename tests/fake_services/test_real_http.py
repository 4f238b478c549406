"""The same contract over loopback HTTP against one real server process."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from killpoint.fake_services import (
    ArtifactCorrupt,
    ArtifactsClient,
    CmsClient,
    FilesClient,
    OutboundClient,
    OutcomeUnknown,
    PaymentsClient,
    PublisherClient,
    Rejected,
    ServiceProcess,
)
from killpoint.fake_services.transport import FaultInjectingTransport
from tests.support.service_faults import plan, rule

pytestmark = pytest.mark.realtier


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    path = tmp_path_factory.mktemp("real") / "journal.sqlite"
    with ServiceProcess(path) as running:
        yield running


@pytest.fixture
def real(server: ServiceProcess) -> Iterator[ServiceProcess]:
    server.reset()
    yield server


@pytest.fixture
def http(real: ServiceProcess) -> Iterator[httpx.Client]:
    with real.client(timeout=2.0) as client:
        yield client


def test_real_lost_response_commits_once_and_the_client_times_out(
    real: ServiceProcess, http: httpx.Client
) -> None:
    real.set_plan(plan(rule("payments", "create_charge", "lost_response")))
    payments = PaymentsClient(http)
    with pytest.raises(OutcomeUnknown):
        payments.create_charge("k", "order-1", 100, "EUR")
    assert len(real.journal.applied_effects("payments", "order-1")) == 1
    assert payments.charge_by_key("k") is not None


def test_real_lost_request_never_reaches_the_server(
    real: ServiceProcess, http: httpx.Client
) -> None:
    real.set_plan(plan(rule("cms", "create_post", "lost_request")))
    with pytest.raises(OutcomeUnknown):
        CmsClient(http).create_post("s", "t", "b")
    assert real.journal.requests() == []


def test_real_duplicate_delivery_makes_two_posts(real: ServiceProcess, http: httpx.Client) -> None:
    real.set_plan(plan(rule("cms", "create_post", "duplicate_delivery")))
    CmsClient(http).create_post("launch", "t", "b")
    assert real.journal.effects_by_business_key("cms") == {"launch": 2}


def test_real_slow_reply_really_outlasts_the_client_timeout(real: ServiceProcess) -> None:
    real.set_plan(plan(rule("cms", "create_post", "slow", delay_s=0.4)))
    started = time.perf_counter()
    with real.client(timeout=0.1) as http, pytest.raises(OutcomeUnknown):
        CmsClient(http).create_post("s", "t", "b")
    assert time.perf_counter() - started >= 0.1
    assert len(real.journal.applied_effects("cms")) == 1


def test_real_payments_replay_and_refuse_a_reused_key(
    real: ServiceProcess, http: httpx.Client
) -> None:
    payments = PaymentsClient(http)
    charge = payments.create_charge("k", "order-1", 100, "EUR")
    assert payments.create_charge("k", "order-1", 100, "EUR") == charge
    with pytest.raises(Rejected):
        payments.create_charge("k", "order-1", 1, "EUR")
    assert len(real.journal.applied_effects("payments")) == 1


def test_real_withheld_publication_appears_when_the_admin_clock_passes_t(
    real: ServiceProcess, http: httpx.Client
) -> None:
    real.set_clock(100.0)
    real.set_plan(plan(rule("publisher", "publish", "withheld_visibility", after_s=10)))
    publisher = PublisherClient(http)
    publisher.publish("doc", "c")
    assert publisher.read("doc") is None
    assert real.advance_clock(10.0) == 110.0
    assert publisher.read("doc") is not None


def test_real_corrupt_artifact_is_caught_by_its_hash(
    real: ServiceProcess, http: httpx.Client
) -> None:
    artifacts = ArtifactsClient(http)
    address = artifacts.put(b"saved result")
    real.set_plan(plan(rule("artifacts", "get", "corrupt_artifact")))
    with pytest.raises(ArtifactCorrupt):
        artifacts.get(address)


def test_real_counters_live_on_the_server_across_clients(real: ServiceProcess) -> None:
    real.set_plan(plan(rule("cms", "create_post", "lost_request", occurrence=2)))
    with real.client() as first, real.client() as second:
        CmsClient(first).create_post("a", "t", "b")
        with pytest.raises(OutcomeUnknown):
            CmsClient(second).create_post("b", "t", "b")


def test_real_server_side_faults_reach_a_bare_client(real: ServiceProcess) -> None:
    real.set_plan(plan(rule("cms", "create_post", "error_before_commit")))
    with httpx.Client(base_url=real.base_url) as bare:
        response = bare.post("/cms/posts", json={"slug": "s", "title": "t", "body": "b"})
    assert response.status_code == 503
    assert [r.outcome for r in real.journal.requests()] == ["error_before_commit"]


def test_real_admin_exposes_the_journal_as_json(real: ServiceProcess, http: httpx.Client) -> None:
    CmsClient(http).create_post("s", "t", "b")
    effects = http.get("/_admin/journal/effects", params={"service": "cms"}).json()["effects"]
    assert [e["business_key"] for e in effects] == ["s"]
    requests = http.get("/_admin/journal/requests").json()["requests"]
    assert [r["operation"] for r in requests] == ["create_post"]


def test_real_requests_carry_the_callers_clock_to_the_server(real: ServiceProcess) -> None:
    """A worker's clock lives in the harness, not the server: each request brings its reading,
    so the journal stamps it with the caller's time and visibility follows the caller's jumps."""
    now = [100.0]
    real.set_plan(plan(rule("publisher", "publish", "withheld_visibility", after_s=10)))
    transport = FaultInjectingTransport(clock=lambda: now[0])
    with httpx.Client(base_url=real.base_url, transport=transport) as caller:
        publisher = PublisherClient(caller)
        publisher.publish("doc", "c")
        assert publisher.read("doc") is None
        now[0] = 110.0  # a clock jump in the worker, with no admin call
        assert publisher.read("doc") is not None
    assert [r.time for r in real.journal.requests("publisher")] == [100.0, 100.0, 110.0]


def test_real_a_transport_told_there_is_no_plan_asks_for_no_decision(
    real: ServiceProcess,
) -> None:
    real.set_plan(plan(rule("cms", "create_post", "lost_request")))
    transport = FaultInjectingTransport(planned=False)  # (wrongly) told there is no plan
    with httpx.Client(base_url=real.base_url, transport=transport) as caller:
        CmsClient(caller).create_post("a", "t", "b")  # not lost: no decision was asked for
        counts = caller.get("/_admin/faults").json()["counts"]
    assert counts == [0]
    assert [e.business_key for e in real.journal.applied_effects("cms")] == ["a"]


def test_real_search_dates_its_answer_by_the_services_clock_not_the_wall(
    real: ServiceProcess, http: httpx.Client
) -> None:
    real.set_clock(1_800_000_000.0)
    page = OutboundClient(http).search("fingerprint", "kp-none")
    assert page.messages == [] and page.searched_at == 1_800_000_000.0


def test_real_delete_answers_an_empty_204(real: ServiceProcess, http: httpx.Client) -> None:
    files = FilesClient(http)
    files.put("a.json", b"first", if_none_match=True)
    files.delete("a.json")
    assert files.get("a.json") is None
    assert http.delete("/files/a.json").content == b""
