from __future__ import annotations

from dataclasses import replace
from itertools import count

import httpx

from killpoint.fake_services import FaultPlan, InProcessServices, PublisherClient
from killpoint.fake_services.realism import ACTIVE, LAG_MAX_S, visibility_lag_s
from tests.support.service_faults import plan, rule


def _seed(lagging: bool, least_s: float = 0.0) -> str:
    """A run seed whose first publication lags (by more than `least_s`), or does not."""
    draws = ((f"run-{n}", visibility_lag_s(ACTIVE, f"run-{n}", 1)) for n in count())
    return next(seed for seed, lag in draws if (lag > least_s) == lagging)


def test_a_publication_with_no_lag_drawn_is_visible_at_once(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(FaultPlan(seed=_seed(lagging=False)))
    publisher = PublisherClient(http)
    published = publisher.publish("doc-1", "hello")
    assert publisher.read("doc-1") == published
    assert publisher.read("doc-2") is None


def test_lags_are_a_distribution_over_runs_the_same_on_every_replay() -> None:
    lags = [visibility_lag_s(ACTIVE, f"run-{n}", 1) for n in range(400)]
    assert lags == [visibility_lag_s(ACTIVE, f"run-{n}", 1) for n in range(400)]
    late = [lag for lag in lags if lag > 0]
    assert 0.25 < len(late) / len(lags) < 0.55
    assert len(set(late)) > 100 and max(late) <= LAG_MAX_S
    assert visibility_lag_s(replace(ACTIVE, visibility_lag=False), _seed(lagging=True), 1) == 0


def test_a_lagging_publication_appears_once_the_clock_passes_its_lag(
    services: InProcessServices, http: httpx.Client
) -> None:
    seed = _seed(lagging=True, least_s=1.0)
    services.set_plan(FaultPlan(seed=seed))
    lag = visibility_lag_s(ACTIVE, seed, 1)
    publisher = PublisherClient(http)
    publisher.publish("doc-1", "hello")
    assert publisher.read("doc-1") is None
    services.clock.advance(lag - 0.01)
    assert publisher.read("doc-1") is None
    services.clock.advance(0.01)
    assert publisher.read("doc-1") is not None


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
