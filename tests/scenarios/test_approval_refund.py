"""The approval gate holds the refund until a human grants it, and a lapsed grant re-asks."""

from __future__ import annotations

from killpoint.contract.boundaries import CHECKPOINT_COMMITTED, STEP_BEGIN
from killpoint.contract.records import RunStatus
from killpoint.harness.run.world import World
from killpoint.scenarios.approval_refund import APPROVAL_TTL_S, GATE, SCENARIO
from tests.scenarios.conftest import crash, run


def test_refund_waits_at_the_gate_until_granted(world: World) -> None:
    # The first worker dies right after committing the wait, before anyone answered the gate,
    # so the next worker's resume must find the gate still closed.
    waiting = crash("approve_refund", CHECKPOINT_COMMITTED)

    history = run(world, SCENARIO, crashes=(waiting,))

    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    (grant,) = history.grants
    assert grant.gate == GATE and grant.time >= history.workers[1].started_at
    charge, refund = history.requests[0], history.requests[1]
    assert (charge.operation, refund.operation) == ("create_charge", "refund")
    assert grant.journal_seq == charge.seq < refund.seq  # nothing refunded before the grant
    waits = [c for c in history.checkpoints if c.status == RunStatus.WAITING_APPROVAL]
    assert len(waits) == 1


def test_grant_that_expired_during_downtime_goes_back_to_the_gate(world: World) -> None:
    # granted, then the worker dies before the refund and stays down past the grant's expiry
    history = run(
        world, SCENARIO, crashes=(crash("refund", STEP_BEGIN),), downtime_s=APPROVAL_TTL_S + 60
    )

    first, second = history.grants
    assert second.time > first.expires_at
    (refund,) = (r for r in history.requests if r.operation == "refund")
    assert refund.seq > second.journal_seq  # the refund went out under the second grant only
    expired = [c for c in history.checkpoints if "expired" in c.reason]
    assert [c.state for c in expired] == ["refund_requested"]
    assert history.final_status == RunStatus.COMPLETED, history.final_reason
