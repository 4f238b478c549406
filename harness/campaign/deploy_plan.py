"""A deploy campaign's runs (`killpoint run --deploys`): each scenario, each strategy.

For each strategy — drain, migrate, coexist — a run is paused at the commit of each step's
checkpoint (its worker stopped there, as a deploy stops workers between steps), a new version
is deployed, and the run resumes as the strategy routes it (`harness.run.deploy_routing`). Then
the deploy's own boundaries: the worker that commits the decision for the run (the first new
worker for a migration, the first old one back for a drain or coexistence) dies before and
after that commit. Last, a migration the compatibility policy must refuse: a change of plan.
The deployed version changes the prompt (a branch by the default policy: migratable).
"""

from __future__ import annotations

from collections.abc import Iterator

from killpoint.contract import boundaries as b
from killpoint.contract.records import DEPLOY_STRATEGIES, DeployStrategy, Versions
from killpoint.harness.history import History
from killpoint.harness.run.deploy_routing import BASE_VERSIONS
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import Deploy, FaultSchedule, HitPoint

PAUSE = b.CHECKPOINT_COMMITTED
DECISION = (b.CHECKPOINT_BUILT, b.CHECKPOINT_COMMITTED)  # a decision runs no step: step None


def base_versions(scenario: Scenario) -> Versions:
    """What the scenario's workers run before the deploy (the runner's base)."""
    return BASE_VERSIONS.model_copy(update={"plan": scenario.workflow.plan_version})


def deployed(scenario: Scenario, field: str = "prompt") -> Versions:
    """The base versions with `field` moved on by one release."""
    base = base_versions(scenario)
    return base.model_copy(update={field: f"{getattr(base, field)}+deploy"})


def decider(strategy: DeployStrategy) -> int:
    """The worker that commits the deploy's decision for a run paused by worker 0 and deployed
    from worker 1: the new worker migrates; an old one, after the new refused, drains or
    coexists."""
    return 1 if strategy == "migrate" else 2


def deploy_schedule(
    scenario: Scenario,
    run_id: str,
    strategy: DeployStrategy,
    crashes: tuple[HitPoint, ...],
    versions: Versions | None = None,
) -> FaultSchedule:
    deploy = Deploy(from_worker=1, versions=versions or deployed(scenario), strategy=strategy)
    return FaultSchedule(scenario=scenario.name, run_id=run_id, crashes=crashes, deploys=(deploy,))


def paused_steps(scenario: Scenario, recording: History | None) -> list[str]:
    """The steps whose commit a pause stops at: those the recording committed (else the
    workflow's), in order, but the last, whose commit is the run's end."""
    if recording is None:
        steps = [t.step.name for t in scenario.workflow.transitions]
    else:
        committed = (h.step for h in recording.hits if h.boundary == PAUSE and h.step)
        steps = list(dict.fromkeys(committed))
    return steps[:-1]


def deploy_runs(scenario: Scenario, recording: History | None = None) -> Iterator[FaultSchedule]:
    """The deploy campaign's schedules for one scenario, in a fixed order."""
    steps = paused_steps(scenario, recording)
    if not steps:
        return
    first = HitPoint(worker=0, step=steps[0], boundary=PAUSE)
    for strategy in DEPLOY_STRATEGIES:
        for n, step in enumerate(steps):
            pause = HitPoint(worker=0, step=step, boundary=PAUSE)
            yield deploy_schedule(scenario, f"deploy-{strategy}-{n}", strategy, (pause,))
        for boundary in DECISION:
            death = HitPoint(worker=decider(strategy), step=None, boundary=boundary)
            run_id = f"deploy-{strategy}-dies-{boundary.rpartition('.')[2]}"
            yield deploy_schedule(scenario, run_id, strategy, (first, death))
    plan = deployed(scenario, "plan")
    yield deploy_schedule(scenario, "deploy-migrate-refused", "migrate", (first,), plan)
