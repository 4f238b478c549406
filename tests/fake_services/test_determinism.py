"""The same fault plan gives the same ground truth, so a failing run can be replayed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from killpoint.fake_services import (
    ArtifactsClient,
    CmsClient,
    FaultPlan,
    InProcessServices,
    MailerClient,
    OutcomeUnknown,
    PaymentsClient,
    PublisherClient,
    ServiceError,
)
from tests.support.service_faults import plan, rule

PLAN = plan(
    rule("payments", "create_charge", "lost_response", occurrence=1),
    rule("payments", "create_charge", "error_after_commit", occurrence=3),
    rule("cms", "create_post", "duplicate_delivery", occurrence=2),
    rule("cms", None, "lost_request", occurrence=4),
    rule("mailer", "send", "timeout_before_commit", occurrence=2),
    rule("publisher", "publish", "withheld_visibility", occurrence=None, after_reads=1),
    rule("artifacts", "get", "corrupt_artifact", occurrence=1),
)


def _workload(fault_plan: FaultPlan) -> tuple[list[str], list[Any], list[Any]]:
    observed: list[str] = []
    with InProcessServices(plan=fault_plan) as services, services.client() as http:
        payments, cms = PaymentsClient(http), CmsClient(http)
        mailer, publisher = MailerClient(http), PublisherClient(http)
        artifacts = ArtifactsClient(http)
        steps: list[Callable[[], object]] = [
            lambda: payments.create_charge("k1", "o1", 100, "EUR"),
            lambda: payments.create_charge("k1", "o1", 100, "EUR"),
            lambda: payments.create_charge("k2", "o2", 100, "EUR"),
            lambda: payments.charges_by_order("o2"),
            lambda: cms.create_post("a", "t", "b"),
            lambda: cms.create_post("b", "t", "b"),
            lambda: cms.posts_by_slug("b"),
            lambda: cms.create_post("c", "t", "b"),
            lambda: mailer.send("x@example.com", "hi", "b"),
            lambda: mailer.send("x@example.com", "hi", "b"),
            lambda: publisher.publish("r", "c"),
            lambda: publisher.read("r"),
            lambda: publisher.read("r"),
            lambda: publisher.publish("s", "c"),
            lambda: publisher.read("s"),
            lambda: publisher.publish("t", "c"),
            lambda: publisher.read("t"),
            lambda: artifacts.put(b"blob"),
            lambda: artifacts.get(artifacts.put(b"blob")),
        ]
        for step in steps:
            services.clock.advance(1.0)
            try:
                observed.append(repr(step()))
            except OutcomeUnknown:
                observed.append("info")
            except ServiceError as exc:
                observed.append(f"fail {type(exc).__name__}")
        requests = [replace(r, seq=0) for r in services.journal.requests()]
        effects = [replace(e, seq=0) for e in services.journal.applied_effects()]
    return observed, requests, effects


def test_the_same_plan_twice_gives_the_same_ground_truth() -> None:
    first, second = _workload(PLAN), _workload(PLAN)
    assert first == second
    observed, _, effects = first
    assert "info" in observed and any(o.startswith("fail") for o in observed)
    assert len(effects) >= 8


def test_a_different_plan_gives_a_different_ground_truth() -> None:
    assert _workload(PLAN)[2] != _workload(FaultPlan())[2]


def test_the_same_seed_gives_the_same_neighbours_and_lags_another_seed_others() -> None:
    seeded = [_workload(FaultPlan(seed=f"run-{n}"))[0] for n in range(6)]
    assert seeded == [_workload(FaultPlan(seed=f"run-{n}"))[0] for n in range(6)]
    assert len({repr(observed) for observed in seeded}) > 1
