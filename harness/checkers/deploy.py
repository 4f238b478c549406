"""Deploy policy: no run resumed by a worker of another version unless it was migrated, and
every deploy's decision for a run in flight on the record of its lineage.

Seed 000: "Never let a new model silently reinterpret an old action status", and plan
deployment around in-flight runs with a drain, migrate or coexist strategy. The evidence is the
versions each worker ran (the harness's record) and those each checkpoint was written under (the
engine's), placed in workers by time (`harness.checkers.deploy_outcome.placed`):

- a worker that commits a checkpoint under versions other than its own ran a run of another
  version without migrating it (a quarantine, the refusal to run it, is no resume);
- in a deploy campaign's run, the first checkpoint any worker commits after the deploy carries
  the strategy's decision in its lineage (or is a refused migration's quarantine, or the
  compatibility policy's branch or restart of a run of a third, legacy version), and the run
  keeps to it: a drained or coexisting run never moves to the deployed versions, a migrated one
  never goes back.

Unknown for an engine that keeps no versions or no readable checkpoints.
"""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import ok, unknown, violated
from killpoint.harness.checkers.deploy_outcome import after_deploy, label, placed, strategic
from killpoint.harness.history import History
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "deploy_policy"


def _cite(cp: CheckpointRecord) -> str:
    return (
        f"checkpoint #{cp.sequence} ({cp.state}, {cp.status}) decision={cp.decision} "
        f"under {label(cp.versions)} at t={cp.created_at:.1f}"
    )


def _ref(cp: CheckpointRecord) -> list[EvidenceRef]:
    return [EvidenceRef(kind="checkpoint", index=cp.sequence)]


def check_deploy(history: History, workflow: Workflow) -> Verdict:
    if not history.schedule.deploys:
        return ok(NAME, "no deploy in this run")
    if "versions" in history.lacks or not history.readable or not history.checkpoints:
        return unknown(NAME, "the engine keeps no versions or checkpoints to judge a deploy by")
    trusted = [cp for cp in history.checkpoints if cp.trusted]
    if any(cp.versions is None for cp in trusted) or any(
        w.versions is None for w in history.workers
    ):
        return unknown(NAME, "a checkpoint or a worker of this run names no versions")
    for cp, worker in placed(history):
        if worker is None or not cp.trusted or cp.status == "quarantined":
            continue
        if cp.versions != worker.versions:
            return violated(
                NAME,
                f"worker {worker.worker} runs {label(worker.versions)} but committed "
                f"checkpoint #{cp.sequence} under {label(cp.versions)}: it resumed a run of "
                "another version without migrating it",
                [_cite(cp), f"worker {worker.worker}: {label(worker.versions)}"],
                _ref(cp),
            )
    return _kept_to_strategy(history)


def _kept_to_strategy(history: History) -> Verdict:
    deploy = strategic(history)
    if deploy is None:
        return ok(NAME, "every checkpoint was written under its worker's versions")
    after = after_deploy(history, deploy)
    if not after:
        return ok(NAME, f"{deploy.strategy}: the run was done before the deploy reached it")
    first = after[0]
    refused = first.status == "quarantined" and deploy.strategy == "migrate"
    # a run of a third version (a legacy checkpoint) meets the compatibility policy instead
    policy = first.decision in ("branch", "restart") and first.versions != deploy.versions
    if first.decision != deploy.strategy and not (refused or policy):
        return violated(
            NAME,
            f"the lineage records no {deploy.strategy} decision for the deploy: the first "
            f"checkpoint after it, #{first.sequence}, says {first.decision}",
            [_cite(first)],
            _ref(first),
        )
    moved = [
        cp for cp in after if (cp.versions == deploy.versions) != (deploy.strategy == "migrate")
    ]
    if moved and not (refused or policy):
        cp = moved[0]
        return violated(
            NAME,
            f"{deploy.strategy}: checkpoint #{cp.sequence} is under {label(cp.versions)}, "
            "against the strategy's routing of the run",
            [_cite(first), _cite(cp)],
            _ref(cp),
        )
    return ok(NAME, f"{deploy.strategy}: {first.reason or 'decision recorded'}")
