"""Which version each worker of a run runs, and what it is told of a deploy in progress.

Before a deploy (`Deploy.from_worker`) every worker runs the base versions. A plain deploy (no
strategy) changes them for every later worker, and the engine's compatibility policy decides.
A deploy campaign's (`Deploy.strategy`) plays the fleet around it: the first worker after the
deploy is always of the new version (a rolling deploy's first delivery, or a queue's
redelivery), so what a new worker does with an old run is the engine's own decision; after it,
a migrated run stays with new workers, and a drained or coexisting one goes back to the old
version's workers, as the strategy routes it. Every worker from the deploy on is told of it.
"""

from __future__ import annotations

from killpoint.contract.records import DeployNotice, Versions
from killpoint.harness.schedule import FaultSchedule

# what every worker runs unless a deploy says otherwise (a world's, with its scenario's plan)
BASE_VERSIONS = Versions(
    plan="plan@1", prompt="prompt@1", model_contract="contract@1", tool_schema="tools@1"
)


def versions_for(base: Versions, schedule: FaultSchedule, worker: int) -> Versions:
    """The versions worker number `worker` runs: `base`, or a deploy's from its worker on."""
    versions = base
    for deploy in schedule.deploys:
        if worker < deploy.from_worker:
            continue
        first = worker == deploy.from_worker
        if deploy.strategy in (None, "migrate") or first:
            versions = deploy.versions
    return versions


def notice_for(schedule: FaultSchedule, worker: int) -> DeployNotice | None:
    """The deploy in progress worker number `worker` is told of (the latest with a strategy)."""
    notice = None
    for deploy in schedule.deploys:
        if deploy.strategy is not None and worker >= deploy.from_worker:
            notice = DeployNotice(strategy=deploy.strategy, versions=deploy.versions)
    return notice
