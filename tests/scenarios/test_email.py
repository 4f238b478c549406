"""A lost e-mail response ends in needs_review with one message sent, never two."""

from __future__ import annotations

from killpoint.harness.contract.records import EffectStatus, RunStatus
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.runner import Run
from killpoint.harness.schedule import FaultSchedule
from killpoint.harness.world import World
from killpoint.scenarios.email import SCENARIO
from tests.scenarios.conftest import lose_response, run, times_applied


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
