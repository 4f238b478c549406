"""Admission: whether this worker may run a checkpoint, and what a version change makes of it.

Seed 000: "Workflow code changes while runs are paused" — store versions and decide
compatibility explicitly, and plan deployment around in-flight runs with a drain, migrate or
coexist strategy. Without a deploy in progress, the compatibility policy decides (continue,
branch, restart or quarantine). During one (`Settings.deploy`), the strategy does:

- **drain** and **coexist**: a run stays with the workers of its own version. A worker of the
  other version leaves it as it is (`Refused`, nothing written); the first worker of its own
  version commits the decision to the lineage before it runs a step.
- **migrate**: a worker of the new version migrates the run's checkpoint (same state and
  outputs, the new versions, a new run of the lineage whose decision is `migrate`) where the
  compatibility policy would let it continue or branch; a change that calls for a restart or a
  quarantine is refused and quarantined with its reason, for an operator. An old worker leaves
  the run for a new one: it cannot make the migration, so it records none.

Every decision is a checkpoint: which versions (its `versions`), which strategy (its lineage's
`decision`) and why (its reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from killpoint.contract.records import DeployNotice, RunStatus, Versions
from killpoint.contract.workflow import Step, Workflow
from killpoint.reference.checkpoint import Checkpoint, Lineage
from killpoint.reference.fold import Change
from killpoint.reference.ledger import Session
from killpoint.reference.settings import Settings

WHY = {
    "drain": "the run finishes on workers of its version before the new version takes over",
    "coexist": "the run keeps workers of its version; new runs take the new version",
    "migrate": "the checkpoint is migrated and the run resumes on the new version",
}


@dataclass(frozen=True)
class Refused:
    """The run belongs to workers of another version: this one leaves it untouched."""

    reason: str


class Committer(Protocol):
    """What admission needs of a worker: its versions, its settings and its commit."""

    versions: Versions
    settings: Settings

    def commit(
        self,
        session: Session,
        wf: Workflow,
        cp: Checkpoint,
        change: Change,
        step: Step | None,
        key: bytes,
    ) -> Checkpoint: ...


def admit(
    worker: Committer, session: Session, wf: Workflow, cp: Checkpoint, key: bytes
) -> Checkpoint | Refused:
    """The checkpoint this worker runs on from here (the decision committed), or its refusal."""
    notice = worker.settings.deploy
    if notice is None:
        return _by_policy(worker, session, wf, cp, key)
    if cp.versions == worker.versions:
        if worker.versions == notice.versions or cp.lineage.decision == notice.strategy:
            return cp  # a run of the new version, or one whose decision is already recorded
        if notice.strategy == "migrate":  # only a new worker migrates; an old one is retired
            return Refused("migrate: a run of the old version waits for a new worker")
        return _decide(worker, session, wf, cp, key, notice, cp.lineage.run_id, cp.versions)
    policy = worker.settings.compatibility
    if worker.versions != notice.versions:
        if cp.versions != notice.versions:  # a third version (a legacy one): not the deploy's
            return _by_policy(worker, session, wf, cp, key)
        newer = policy.decide(worker.versions, cp.versions)[1]
        return Refused(f"{notice.strategy}: a run of the new version ({newer}) is not ours")
    decision, why = policy.decide(cp.versions, worker.versions)
    if notice.strategy != "migrate":
        return Refused(f"{notice.strategy}: a run of the old version ({why}) is not ours")
    if decision in ("restart", "quarantine"):
        reason = f"migrate refused: {why} calls for {decision}, not a migration"
        change = Change(cp.state, RunStatus.QUARANTINED, reason)
        return worker.commit(session, wf, cp, change, None, key)
    run_id = f"{cp.workflow_id}:r{cp.sequence + 1}"
    return _decide(worker, session, wf, cp, key, notice, run_id, worker.versions)


def _decide(
    worker: Committer,
    session: Session,
    wf: Workflow,
    cp: Checkpoint,
    key: bytes,
    notice: DeployNotice,
    run_id: str,
    versions: Versions,
) -> Checkpoint:
    """Commit the deploy's decision for this run: the lineage names the strategy, the
    checkpoint the versions it runs on from here, its reason the deploy and why."""
    deployed = worker.settings.compatibility.decide(cp.versions, notice.versions)[1]
    parent = cp.lineage.parent_run_id if run_id == cp.lineage.run_id else cp.lineage.run_id
    lineage = Lineage(run_id=run_id, parent_run_id=parent, decision=notice.strategy)
    reason = f"{notice.strategy}: deploy of {deployed}; {WHY[notice.strategy]}"
    change = Change(cp.state, cp.status, reason, lineage=lineage, versions=versions)
    return worker.commit(session, wf, cp, change, None, key)


def _by_policy(
    worker: Committer, session: Session, wf: Workflow, cp: Checkpoint, key: bytes
) -> Checkpoint:
    """No deploy in progress: the compatibility policy's decision for the versions' drift."""
    decision, why = worker.settings.compatibility.decide(cp.versions, worker.versions)
    if decision == "continue":
        return cp
    if decision == "quarantine":
        reason = f"incompatible versions: {why}"
        return worker.commit(
            session, wf, cp, Change(cp.state, RunStatus.QUARANTINED, reason), None, key
        )
    lineage = Lineage(
        run_id=f"{cp.workflow_id}:r{cp.sequence + 1}",
        parent_run_id=cp.lineage.run_id,
        decision=decision,
    )
    state = cp.state if decision == "branch" else wf.initial
    change = Change(
        state,
        cp.status,
        f"{decision}: {why}",
        lineage=lineage,
        versions=worker.versions,
        reset=decision == "restart",
    )
    return worker.commit(session, wf, cp, change, None, key)
