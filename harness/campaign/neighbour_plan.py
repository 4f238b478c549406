"""Which runs of a plan get neighbours: a sample, where a crossing over does most harm.

A neighbour (`FaultSchedule.neighbours`, `harness.run.neighbours`) costs a fault-free run of its
scenario, so the plan gives them to a few runs only: the riskiest single crash of each scenario
gets one between its crash and its recovery (the run is in doubt while the neighbour acts), and
each named case of a scenario with a human gate gets another workflow of its tenant, approved
at the same gate before the run begins. The exploration draws them too (`drawn`). Deterministic:
what a run gets depends on the scenario and the run alone.

A second tenant runs with the run's own business keys only where production shares them
between tenants (`same_keys_shared`): a platform's payment account, where order ids are per
shop; a mail provider's account, where recipients are people who buy from two shops; a
content-addressed store. A CMS site, a publication feed or a bucket is each tenant's own: two
tenants' posts under one slug of one site is a world no engine can keep apart, so a scenario
that writes there gets another workflow of its tenant instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import Neighbour

if TYPE_CHECKING:
    from killpoint.harness.campaign.plan import PlannedRun

# the services a platform shares between its tenants, business keys and all
SHARED_ACCOUNTS = frozenset({"payments", "mailer", "outbound", "artifacts"})
DRAW = 16  # the exploration's neighbour draw: values 0..DRAW-1, the top DRAWN give one
DRAWN = 2


def same_keys_shared(scenario: Scenario) -> bool:
    """Whether a second tenant with this scenario's input is a world production has: every
    service its workflow calls is one a platform shares between its tenants."""
    services = {t.step.service for t in scenario.workflow.transitions if t.step.service}
    return services <= SHARED_ACCOUNTS


def gated(scenario: Scenario) -> bool:
    return any(t.step.gate is not None for t in scenario.workflow.transitions)


def kind_for(scenario: Scenario) -> Literal["tenant", "workflow"]:
    """A second tenant where the scenario's business keys may be shared, else a workflow."""
    return "tenant" if same_keys_shared(scenario) else "workflow"


def beside(run: PlannedRun, *neighbours: Neighbour) -> PlannedRun:
    schedule = run.schedule.model_copy(update={"neighbours": neighbours})
    return replace(run, schedule=schedule)


def beside_singles(scenario: Scenario, runs: Iterable[PlannedRun]) -> Iterator[PlannedRun]:
    """The single crashes, riskiest first, the first told no lie (one fault of the world's at
    a time) with a neighbour before its recovery."""
    placed = False
    for run in runs:
        if placed or run.schedule.lies:
            yield run
            continue
        placed = True
        yield beside(run, Neighbour(kind=kind_for(scenario), before_worker=1))


def beside_named(scenario: Scenario, runs: Iterable[PlannedRun]) -> Iterator[PlannedRun]:
    """Named cases; at a scenario with a human gate, each with another workflow of its tenant
    that passes the gate before the run begins."""
    for run in runs:
        yield beside(run, Neighbour(kind="workflow", before_worker=0)) if gated(scenario) else run


def drawn(value: int, scenario: Scenario) -> tuple[Neighbour, ...]:
    """The exploration's draw (`value` in 0..DRAW-1, shrinking to none): the top `DRAWN`
    values give a neighbour, as the plan's runs have them: one of the scenario's kind before
    the recovery, or another workflow before the run begins."""
    top = value - (DRAW - DRAWN)
    if top < 0:
        return ()
    if top == 0:
        return (Neighbour(kind=kind_for(scenario), before_worker=1),)
    return (Neighbour(kind="workflow", before_worker=0),)
