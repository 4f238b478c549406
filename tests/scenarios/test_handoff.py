"""The receiver checks the handoff contract and refuses one it cannot honour."""

from __future__ import annotations

from killpoint.contract.boundaries import HANDOFF_ACCEPTED, HANDOFF_SENT, STEP_BEGIN
from killpoint.contract.records import RunStatus
from killpoint.harness.run.world import World
from killpoint.harness.schedule import ClockJump
from killpoint.scenarios.handoff import INCOMPATIBLE_SCENARIO, SCENARIO
from tests.scenarios.conftest import applied, crash, run


def test_clean_handoff_declares_sent_and_accepted_boundaries(world: World) -> None:
    history = run(world, SCENARIO, "bounds")

    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    names = [hit.boundary for hit in history.hits]
    assert names.index(HANDOFF_SENT) < names.index(HANDOFF_ACCEPTED)


def test_incompatible_contract_needs_review_and_publishes_nothing(world: World) -> None:
    history = run(world, INCOMPATIBLE_SCENARIO, "schema")

    assert history.final_status == RunStatus.NEEDS_REVIEW
    assert "not supported" in history.final_reason
    assert HANDOFF_ACCEPTED not in {hit.boundary for hit in history.hits}
    assert applied(history, "publisher") == []


def test_contract_past_its_deadline_after_downtime_is_refused(world: World) -> None:
    # the first worker dies as it sends the contract; the second writes and records it, then
    # dies before the receiver reads it and stays down longer than the contract's deadline
    accepting = crash("accept_contract", STEP_BEGIN, worker=1)
    history = run(
        world,
        SCENARIO,
        "late",
        crashes=(crash("write_contract", HANDOFF_SENT), accepting),
        clock_jumps=(ClockJump(at=accepting, seconds=2 * 3_600),),
    )

    assert [w.end for w in history.workers] == ["killed", "killed", "stopped"]
    assert history.final_status == RunStatus.NEEDS_REVIEW
    assert "deadline" in history.final_reason
    assert applied(history, "publisher") == []
