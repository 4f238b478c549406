"""What a deploy did to a run, read off its history: who committed what, under which versions.

A checkpoint is placed in the worker whose span on the world clock holds its time (workers of
one run take turns, with downtime between them; a checkpoint two spans hold, as a pair's may,
is placed in neither). A deploy campaign's run (`Deploy.strategy`) then ends one of five ways:
the run was done before the deploy reached it (`untouched`), or the first worker to act on it
after the deploy drained it (`finished_on_old`), kept it with the old version's workers
(`coexisted`), migrated it (`migrated`), or refused to migrate it (`refused`, quarantined for an
operator); a run of a third, legacy version meets the compatibility policy instead
(`by_policy`), and one acted on with no decision recorded is `undecided`.
"""

from __future__ import annotations

from typing import Literal

from killpoint.contract.records import Versions
from killpoint.harness.history import History, WorkerRecord
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.schedule import Deploy

DeployOutcome = Literal[
    "untouched", "finished_on_old", "coexisted", "migrated", "refused", "by_policy", "undecided"
]
DECIDED: dict[str, DeployOutcome] = {
    "drain": "finished_on_old",
    "coexist": "coexisted",
    "migrate": "migrated",
    "branch": "by_policy",  # a run of a third (legacy) version: the compatibility policy's
    "restart": "by_policy",
}


def strategic(history: History) -> Deploy | None:
    """The run's deploy that names a strategy (a deploy campaign's), if any: the last."""
    named = [d for d in history.schedule.deploys if d.strategy is not None]
    return named[-1] if named else None


def placed(history: History) -> list[tuple[CheckpointRecord, WorkerRecord | None]]:
    """Each committed checkpoint (staged tamperings left out) with the worker that wrote it."""
    altered = {t.sequence for t in history.staged}
    out = []
    for cp in sorted(history.checkpoints, key=lambda c: c.sequence):
        if cp.sequence in altered:
            continue
        spans = [w for w in history.workers if w.started_at <= cp.created_at <= w.ended_at]
        out.append((cp, spans[0] if len(spans) == 1 else None))
    return out


def after_deploy(history: History, deploy: Deploy) -> list[CheckpointRecord]:
    """The trusted checkpoints workers from the deploy on committed, in order."""
    return [
        cp
        for cp, worker in placed(history)
        if worker is not None and worker.worker >= deploy.from_worker and cp.trusted
    ]


def deploy_outcome(history: History) -> DeployOutcome | None:
    """How a deploy campaign's run came through its deploy; None for any other run."""
    deploy = strategic(history)
    if deploy is None:
        return None
    after = after_deploy(history, deploy)
    if not after:
        return "untouched"
    first = after[0]
    if first.status == "quarantined" and first.decision != deploy.strategy:
        return "refused"
    return DECIDED.get(first.decision or "", "undecided")


def label(versions: Versions | None) -> str:
    if versions is None:
        return "(no versions)"
    v = versions
    return f"{v.plan} · {v.prompt} · {v.model_contract} · {v.tool_schema}"
