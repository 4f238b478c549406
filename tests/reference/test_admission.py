"""Admission during a deploy, on the reference engine itself: new runs take the new version, a
run of one version is never run on the other's code without a recorded migration."""

from __future__ import annotations

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import DeployNotice, DeployStrategy, RunStatus
from killpoint.harness.run.killswitch import Killed
from tests.support.fixtures import NewWorker
from tests.support.flows import VERSIONS, kill_at

NEW = VERSIONS.model_copy(update={"prompt": "writer@2"})


def _notice(strategy: DeployStrategy) -> DeployNotice:
    return DeployNotice(strategy=strategy, versions=NEW)


@pytest.mark.parametrize("strategy", ["drain", "migrate", "coexist"])
def test_a_run_started_during_a_deploy_takes_the_new_version(
    new_worker: NewWorker, strategy: DeployStrategy
) -> None:
    worker = new_worker(versions=NEW, deploy=_notice(strategy))
    assert worker.run("pure", "wf-new", {"n": 1}).status is RunStatus.COMPLETED
    checkpoints = worker.store.checkpoints("wf-new")
    assert {worker.open(c, worker.settings.secret.resolve()).versions for c in checkpoints} == {NEW}
    assert {c.run_id for c in checkpoints} == {"wf-new:r1"}


def test_an_old_worker_leaves_a_migrated_run_untouched(
    new_worker: NewWorker, clock: FakeClock
) -> None:
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.CHECKPOINT_COMMITTED, "plan")).run(
            "pure", "wf-1", {"n": 1}
        )
    clock.advance(31)
    with pytest.raises(Killed):  # dies once its migration is committed
        new_worker(
            versions=NEW,
            deploy=_notice("migrate"),
            hook=kill_at(clock, b.CHECKPOINT_COMMITTED),
        ).resume("wf-1")
    clock.advance(31)
    old = new_worker(deploy=_notice("migrate"))
    before = old.store.workflow("wf-1").sequence
    outcome = old.resume("wf-1")
    assert outcome.status is RunStatus.RUNNING
    assert (
        outcome.reason == "migrate: a run of the new version (prompt writer@1→writer@2) is not ours"
    )
    assert old.store.workflow("wf-1").sequence == before
    assert new_worker(versions=NEW, deploy=_notice("migrate")).resume("wf-1").status is (
        RunStatus.COMPLETED
    )


def test_an_old_worker_never_records_a_migration_it_cannot_make(
    new_worker: NewWorker, clock: FakeClock
) -> None:
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.CHECKPOINT_COMMITTED, "plan")).run(
            "pure", "wf-1", {"n": 1}
        )
    clock.advance(31)
    old = new_worker(deploy=_notice("migrate"))
    before = old.store.workflow("wf-1").sequence
    assert old.resume("wf-1").reason == "migrate: a run of the old version waits for a new worker"
    assert old.store.workflow("wf-1").sequence == before
