"""Version drift: the compatibility policy continues, branches, restarts or quarantines."""

from __future__ import annotations

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus, Versions
from killpoint.harness.engines.reference import StoreReader
from killpoint.harness.run.killswitch import Killed
from killpoint.reference.checkpoint import open_checkpoint
from killpoint.reference.compat import CompatibilityPolicy
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import VERSIONS, kill_at

KEY = TEST_KEY.encode()


def changed(**fields: str) -> Versions:
    return VERSIONS.model_copy(update=fields)


@pytest.mark.parametrize(
    ("runtime", "decision"),
    [
        (VERSIONS, "continue"),
        (changed(prompt="writer@2"), "branch"),
        (changed(model_contract="draft-v2"), "branch"),
        (changed(tool_schema="tools@2"), "restart"),
        (changed(plan="flows@2"), "quarantine"),
        (changed(prompt="writer@2", tool_schema="tools@2"), "restart"),
    ],
)
def test_the_strictest_change_decides(runtime: Versions, decision: str) -> None:
    got, why = CompatibilityPolicy().decide(VERSIONS, runtime)
    assert got == decision
    assert ("→" in why) == (decision != "continue")


def _interrupted(new_worker: NewWorker, clock: FakeClock) -> None:
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.CHECKPOINT_COMMITTED, "plan")).run(
            "pure", "wf-1", {"n": 1}
        )
    clock.advance(31)


def test_a_prompt_change_branches_a_new_lineage_with_its_parent(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    _interrupted(new_worker, clock)

    outcome = new_worker(versions=changed(prompt="writer@2")).resume("wf-1")

    assert outcome.status is RunStatus.COMPLETED
    cps = [open_checkpoint(row, KEY, "default") for row in store.checkpoints("wf-1")]
    branch = cps[2]
    assert (branch.state, branch.lineage.decision) == ("planned", "branch")
    assert branch.lineage.parent_run_id == cps[1].lineage.run_id == "wf-1:r1"
    assert branch.lineage.run_id != "wf-1:r1"
    assert branch.versions.prompt == "writer@2" and cps[1].versions.prompt == "writer@1"
    assert "prompt writer@1→writer@2" in branch.status_reason
    assert cps[-1].lineage == branch.lineage
    views = StoreReader(store, "default").checkpoints("wf-1")
    assert views[2].outputs == views[1].outputs != {}  # a branch keeps the work done


def test_a_tool_schema_change_restarts_from_the_initial_state(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    _interrupted(new_worker, clock)

    outcome = new_worker(versions=changed(tool_schema="tools@2")).resume("wf-1")

    assert outcome.status is RunStatus.COMPLETED
    restart = open_checkpoint(store.checkpoints("wf-1")[2], KEY, "default")
    assert (restart.state, restart.lineage.decision) == ("start", "restart")
    views = StoreReader(store, "default").checkpoints("wf-1")
    assert views[2].outputs == {} != views[1].outputs  # a restart starts its work over
    assert restart.lineage.parent_run_id == "wf-1:r1"


def test_a_plan_change_quarantines_the_run(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    _interrupted(new_worker, clock)

    outcome = new_worker(versions=changed(plan="flows@2")).resume("wf-1")

    assert (outcome.status, outcome.state) == (RunStatus.QUARANTINED, "planned")
    assert "incompatible versions: plan flows@1→flows@2" in outcome.reason
    assert len(store.checkpoints("wf-1")) == 3
    clock.advance(31)
    assert new_worker().resume("wf-1").status is RunStatus.QUARANTINED


def test_a_policy_may_let_a_change_continue_in_the_same_lineage(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    _interrupted(new_worker, clock)
    worker = new_worker(
        versions=changed(prompt="writer@2"),
        compatibility=CompatibilityPolicy(on_prompt_change="continue"),
    )
    assert worker.resume("wf-1").status is RunStatus.COMPLETED
    last = open_checkpoint(store.checkpoints("wf-1")[-1], KEY, "default")
    assert last.lineage.run_id == "wf-1:r1" and last.versions.prompt == "writer@1"
