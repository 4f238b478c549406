from __future__ import annotations

import pytest
from pydantic import ValidationError

from killpoint.fake_services import FaultInjector, FaultMode, FaultPlan, FaultRule
from killpoint.fake_services.faults import OPERATIONS, classify
from tests.support.service_faults import plan, rule


def test_fault_plan_round_trips_through_json() -> None:
    original = plan(
        rule("payments", "create_charge", "lost_response", occurrence=2),
        rule("cms", None, "slow", occurrence=None, delay_s=3.0),
        rule("publisher", "publish", "withheld_visibility", after_reads=2),
    )
    text = original.model_dump_json()
    assert FaultPlan.model_validate_json(text) == original
    assert '"mode":"lost_response"' in text


def test_occurrence_is_the_index_among_matching_requests() -> None:
    injector = FaultInjector(plan(rule("cms", "create_post", "lost_response", occurrence=2)))
    seen = [injector.decide("cms", op) for op in ("create_post", "get_post", "create_post")]
    assert seen[0] is None and seen[1] is None
    assert seen[2] is not None and seen[2].mode is FaultMode.LOST_RESPONSE
    assert injector.decide("cms", "create_post") is None


def test_null_occurrence_fires_on_every_matching_request() -> None:
    injector = FaultInjector(plan(rule("mailer", None, "error_before_commit", occurrence=None)))
    assert all(injector.decide("mailer", "send") is not None for _ in range(3))


def test_first_matching_rule_wins_but_every_matching_rule_counts() -> None:
    injector = FaultInjector(
        plan(
            rule("cms", None, "lost_request", occurrence=1),
            rule("cms", "create_post", "lost_response", occurrence=2),
        )
    )
    first, second = (injector.decide("cms", "create_post") for _ in range(2))
    assert first is not None and first.mode is FaultMode.LOST_REQUEST
    assert second is not None and second.mode is FaultMode.LOST_RESPONSE
    assert injector.counts() == [2, 2]


def test_setting_a_plan_restarts_its_counters() -> None:
    injector = FaultInjector(plan(rule("cms", "create_post", "lost_response")))
    assert injector.decide("cms", "create_post") is not None
    injector.set_plan(injector.plan)
    assert injector.decide("cms", "create_post") is not None


@pytest.mark.parametrize(
    "bad",
    [
        rule("nosuch", None, "lost_request"),
        rule("cms", "nosuch", "lost_request"),
        rule("cms", "create_post", "withheld_visibility"),
        rule("artifacts", "put", "corrupt_artifact"),
        rule("cms", "create_post", "slow"),
        rule("cms", "create_post", "lost_request", occurrence=0),
    ],
)
def test_rules_that_cannot_apply_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        FaultRule.model_validate(bad)


def test_every_operation_is_classified_from_method_and_path() -> None:
    assert classify("POST", "/payments/charges") == ("payments", "create_charge")
    assert classify("GET", "/cms/posts") == ("cms", "posts_by_slug")
    assert classify("GET", "/cms/posts/post_000001") == ("cms", "get_post")
    assert classify("PUT", "/artifacts/abc") == ("artifacts", "put")
    assert classify("GET", "/_admin/health") is None
    assert len({(service, op) for _, _, service, op in OPERATIONS}) == len(OPERATIONS)
