from __future__ import annotations

import httpx

from killpoint.fake_services import InProcessServices, PublisherClient
from tests.fake_services.conftest import plan, rule


def test_publication_is_visible_at_once_by_default(http: httpx.Client) -> None:
    publisher = PublisherClient(http)
    published = publisher.publish("doc-1", "hello")
    assert publisher.read("doc-1") == published
    assert publisher.read("doc-2") is None


def test_withheld_publication_appears_once_the_clock_passes_t(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("publisher", "publish", "withheld_visibility", after_s=30)))
    publisher = PublisherClient(http)
    publisher.publish("doc-1", "hello")
    assert publisher.read("doc-1") is None
    services.clock.advance(29.9)
    assert publisher.read("doc-1") is None
    services.clock.advance(0.1)
    assert publisher.read("doc-1") is not None


def test_withheld_publication_appears_after_n_reads(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("publisher", "publish", "withheld_visibility", after_reads=2)))
    publisher = PublisherClient(http)
    publisher.publish("doc-1", "hello")
    assert [publisher.read("doc-1") is None for _ in range(3)] == [True, True, False]


def test_withheld_without_a_bound_is_never_visible(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(plan(rule("publisher", "publish", "withheld_visibility")))
    publisher = PublisherClient(http)
    publisher.publish("doc-1", "hello")
    services.clock.advance(10_000)
    assert publisher.read("doc-1") is None
    assert len(services.journal.applied_effects("publisher", "doc-1")) == 1
    assert services.journal.requests("publisher")[-1].outcome == "not_visible"
