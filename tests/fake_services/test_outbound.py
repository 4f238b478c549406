from __future__ import annotations

from dataclasses import replace
from itertools import count

import httpx
import pytest

from killpoint.fake_services import FaultPlan, InProcessServices, OutboundClient, Rejected
from killpoint.fake_services.mailer import message_key
from killpoint.fake_services.realism import ACTIVE, SEARCH_WINDOW_S, search_lag_s


def _seed(lagging: bool) -> str:
    """A run seed whose first message lags in the search, or does not."""
    return next(s for n in count() if (search_lag_s(ACTIVE, s := f"run-{n}", 1) > 0) == lagging)


def test_every_send_is_an_effect_keyed_by_recipient_and_subject_whatever_its_metadata(
    services: InProcessServices, http: httpx.Client
) -> None:
    outbound = OutboundClient(http)
    outbound.send("ann@example.com", "Your order", "shipped", {"fingerprint": "a"})
    outbound.send("ann@example.com", "Your order", "shipped", {"fingerprint": "a"})
    counts = services.journal.effects_by_business_key("outbound")
    assert counts == {message_key("ann@example.com", "Your order"): 2}  # no idempotency


def test_a_message_shows_in_the_search_by_its_metadata_once_indexed(
    services: InProcessServices, http: httpx.Client
) -> None:
    services.set_plan(FaultPlan(seed=_seed(lagging=False)))
    outbound = OutboundClient(http)
    sent = outbound.send("ann@example.com", "Your order", "shipped", {"fingerprint": "kp-1"})
    page = outbound.search("fingerprint", "kp-1")
    assert page.messages == [sent]
    assert outbound.search("fingerprint", "kp-2").messages == []
    searches = services.journal.requests("outbound")[1:]
    assert [(r.outcome, r.business_key) for r in searches] == [
        ("ok", message_key("ann@example.com", "Your order")),
        ("not_found", None),
    ]


def test_a_lagging_message_is_absent_from_the_search_until_its_lag_passes(
    services: InProcessServices, http: httpx.Client
) -> None:
    seed = _seed(lagging=True)
    services.set_plan(FaultPlan(seed=seed))
    services.clock.set(1_800_000_000.0)
    outbound = OutboundClient(http)
    outbound.send("ann@example.com", "Your order", "shipped", {"fingerprint": "kp-1"})
    first = outbound.search("fingerprint", "kp-1")
    assert first.messages == [] and first.searched_at == 1_800_000_000.0  # the `Date` header
    services.clock.advance(search_lag_s(ACTIVE, seed, 1))
    assert len(outbound.search("fingerprint", "kp-1").messages) == 1


def test_search_lags_are_a_distribution_bounded_by_the_window() -> None:
    lags = [search_lag_s(ACTIVE, f"run-{n}", 1) for n in range(400)]
    assert lags == [search_lag_s(ACTIVE, f"run-{n}", 1) for n in range(400)]
    late = [lag for lag in lags if lag > 0]
    assert 0.35 < len(late) / len(lags) < 0.65
    assert len(set(late)) > 100 and max(late) <= SEARCH_WINDOW_S
    assert search_lag_s(replace(ACTIVE, search_lag=False), _seed(lagging=True), 1) == 0


@pytest.mark.parametrize(
    "params",
    [{}, {"metadata_a": "1", "metadata_b": "2"}],
    ids=["no metadata field", "two metadata fields"],
)
def test_a_search_names_exactly_one_metadata_field(
    http: httpx.Client, params: dict[str, str]
) -> None:
    response = http.get("/outbound/messages", params=params)
    assert response.status_code == 422


def test_one_metadata_name_twice_in_two_cases_is_refused(
    services: InProcessServices, http: httpx.Client
) -> None:
    with pytest.raises(Rejected) as refused:
        OutboundClient(http).send("a@example.com", "s", "b", {"a_key": "1", "A_Key": "2"})
    assert refused.value.status == 422
    assert services.journal.applied_effects("outbound") == []
