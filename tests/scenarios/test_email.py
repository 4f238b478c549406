"""A lost e-mail response ends in needs_review with one message sent, never two; sent through
an outbox and a searchable provider, it ends completed with one message, found by its
fingerprint or proved absent and sent once."""

from __future__ import annotations

from itertools import count
from pathlib import Path

from killpoint import run_campaign
from killpoint.contract.records import EffectStatus, RunStatus
from killpoint.fake_services import FaultMode, FaultPlan, FaultRule
from killpoint.fake_services.realism import ACTIVE, search_lag_s
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.run.runner import Run
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios.adapters import FINGERPRINT
from killpoint.scenarios.email import OUTBOX_SCENARIO, SCENARIO
from tests.scenarios.conftest import client, crash, lose_response, run, times_applied


def test_lost_response_ends_in_review_with_exactly_one_message(world: World) -> None:
    history = run(world, SCENARIO, "lost", network=lose_response("mailer", "send"))
    # the same workflow again, in the same world, as a later worker (a redelivered start)
    # would find it: each campaign run starts afresh, so this one is run by hand
    later = FaultSchedule(scenario=SCENARIO.name, run_id="lost")
    world.services.reset()
    again = Run(world, SCENARIO, later, REFERENCE).execute()

    assert history.final_status == RunStatus.NEEDS_REVIEW, history.final_reason
    assert again.final_status == RunStatus.NEEDS_REVIEW
    (expected,) = history.expected
    assert times_applied(history, expected) == 1
    assert [r.service for r in history.requests] == ["mailer"]
    assert again.requests == []  # the later worker sent nothing either
    (effect,) = again.effects
    assert effect.status is EffectStatus.NEEDS_REVIEW


def _lagging_run_id() -> str:
    """A run id whose first message shows in the search only after a lag (the run id seeds
    the services' realism draws)."""
    return next(r for n in count() if search_lag_s(ACTIVE, r := f"lag-{n}", 1) > 0)


def _outbox_run(world: World, run_id: str, mode: FaultMode, **schedule: object) -> History:
    rule = FaultRule(service="outbound", operation="send", occurrence=1, mode=mode)
    return run(world, OUTBOX_SCENARIO, run_id, network=FaultPlan.of(rule), **schedule)


def _completed_once(history: History) -> None:
    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    (expected,) = history.expected
    assert times_applied(history, expected) == 1
    assert [v.checker for v in check_all(history, OUTBOX_SCENARIO.workflow) if not v.valid] == []


def test_outbox_lost_response_is_found_by_its_fingerprint_and_its_message_id_committed(
    world: World,
) -> None:
    history = _outbox_run(world, _lagging_run_id(), FaultMode.LOST_RESPONSE)
    _completed_once(history)
    (row,) = history.effects
    (sent,) = [a for a in history.applied if a.service == "outbound"]
    assert row.receipt is not None and row.receipt.resource_id == sent.resource_id
    assert "reconciled: the service has the effect" in row.reason or row.status == "verified"
    sends = [r for r in history.requests if r.operation == "send"]
    searches = [r.outcome for r in history.requests if r.operation == "search"]
    assert len(sends) == 1 and searches[0] == "not_found"  # not yet indexed: waited, found
    with client(world) as http:
        (message,) = http.get(
            "/outbound/messages", params={f"metadata_{FINGERPRINT}": row.idempotency_key}
        ).json()["messages"]
    assert message["id"] == sent.resource_id  # the fingerprint the provider holds is the key


def test_outbox_crash_in_the_lost_response_window_completes_with_one_message(
    world: World,
) -> None:
    history = run(
        world,
        OUTBOX_SCENARIO,
        _lagging_run_id(),
        crashes=[crash("notify", "transport.response_received")],
    )
    _completed_once(history)
    assert [r.operation for r in history.requests].count("send") == 1


def test_outbox_a_send_that_never_landed_is_proved_absent_and_sent_once(world: World) -> None:
    history = _outbox_run(world, "before-commit", FaultMode.TIMEOUT_BEFORE_COMMIT)
    _completed_once(history)
    outcomes = [r.outcome for r in history.requests if r.operation == "send"]
    assert outcomes == ["timeout_before_commit", "applied"]
    searched = [r for r in history.requests if r.operation == "search"]
    assert searched[0].time + 2 <= searched[-1].time  # absence proved a window later


def test_outbox_a_search_that_cannot_be_made_leaves_the_doubt_to_review(world: World) -> None:
    rules = (
        FaultRule(service="outbound", operation="send", occurrence=1, mode="lost_response"),
        FaultRule(service="outbound", operation="search", mode="error_before_commit"),
    )
    history = run(world, OUTBOX_SCENARIO, "blind", network=FaultPlan(rules=rules))
    assert history.final_status == RunStatus.NEEDS_REVIEW, history.final_reason
    assert [r.operation for r in history.requests].count("send") == 1
    assert [v.checker for v in check_all(history, OUTBOX_SCENARIO.workflow) if not v.valid] == []


def test_a_campaign_of_the_outbox_ends_no_run_in_review_where_the_plain_mailer_ends_many(
    tmp_path: Path,
) -> None:
    """Issue 17's acceptance, on the plan's single crashes, network faults and named cases:
    the mailer in doubt must escalate, the outbox never has to, for its search is answered in
    all of them (a search that is not answered is the exploration's, and ends in review)."""
    reviews = {
        name: sum(
            r.final_status == "needs_review"
            for r in run_campaign(
                name, workdir=tmp_path, explore="0", double=False, interleave=False
            ).runs
        )
        for name in ("email", "email_outbox")
    }
    assert reviews["email"] >= 5 and reviews["email_outbox"] == 0, reviews
