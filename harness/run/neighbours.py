"""Neighbours: other runs in a run's world, so that a mistake only a neighbour shows is seen.

Production is wider than one run: a second tenant with the same business keys (order ids are
per shop, a recipient buys from two shops) and approvers of its own, other workflows of the same
tenant at the same gates. A schedule names its neighbours (`FaultSchedule.neighbours`); before
the worker each names, the neighbour runs to its end on fault-free workers of its own, of the
run's own tier (forked worker processes in the real tier), in the same world: the same store
(a `StoreHandle` of its tenant, sharing the world's open objects), the same services and clock,
the same approval inbox (the harness plays its approver, `approved_by`). Its requests meet no
fault of the schedule and move no fault rule's counter (`Unplanned`), so the run's own faults
land where the schedule says.

Every request a worker sends carries its origin (`origin_of`: tenant and workflow, put on at
the transport), which the services journal and never act on: it is the harness's own record of
who sent what, as Jepsen's client process is. The run's history keeps its own requests and
effects (`attributed`: those it signed or nobody did) and one `NeighbourRecord` per neighbour
that ran, read when the run ended (`neighbour_records`), for the isolation checker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import quote

import httpx

from killpoint.fake_services import FaultPlan, Journal
from killpoint.fake_services.journal import AppliedEffect, RequestRecord
from killpoint.harness.checkers.ground_truth import (
    content_addressed,
    expected_records,
    is_mutation,
    sent_by,
)
from killpoint.harness.history import ExpectedEffectRecord, NeighbourRecord
from killpoint.harness.run.durable import read_records, run_ending
from killpoint.harness.scenario import GatePolicy, Scenario
from killpoint.harness.schedule import FaultSchedule, Neighbour

if TYPE_CHECKING:
    from killpoint.harness.run.runner import Run
    from killpoint.harness.run.world import Services

OTHER_TENANTS = ("tenant-b", "tenant-c", "tenant-d", "tenant-e", "tenant-f")
WORKERS = 3  # a neighbour's fault-free workers: one is enough unless the engine fails


def origin_of(tenant: str, workflow_id: str) -> str:
    """Who sent a request, as its header says: `tenant/workflow`, each part quoted so that any
    name travels in a header (a tenant never holds the `/`)."""
    return f"{quote(tenant, safe='')}/{quote(workflow_id, safe=':@~+')}"


def attributed(
    journal: Journal, origin: str | None
) -> tuple[list[RequestRecord], list[AppliedEffect]]:
    """The run's own requests and effects: those it signed, or nobody did; and an object named
    by its content that a neighbour stored first when the run asked for it too (the service
    answered that it holds it: the run's effect is there, under the neighbour's name)."""
    requests = [r for r in journal.requests() if sent_by(origin, r)]
    asked = {(r.service, r.business_key) for r in requests if is_mutation(r)}
    applied = [
        e
        for e in journal.applied_effects()
        if sent_by(origin, e) or (content_addressed(e) and (e.service, e.business_key) in asked)
    ]
    return requests, applied


@dataclass(frozen=True)
class OwnRecords:
    """What of the world's ground truth is one run's own (`own_records`)."""

    expected: list[ExpectedEffectRecord]
    requests: list[RequestRecord]
    applied: list[AppliedEffect]


def own_records(run: Run, journal: Journal) -> OwnRecords:
    """The run's expected effects (a child's key the one its own parent made), requests and
    effects (`attributed`), as its history keeps them."""
    expected = expected_records(run.scenario.expected_effects(run.input), journal, run.origin)
    return OwnRecords(expected, *attributed(journal, run.origin))


class Unplanned:
    """The world's services as a neighbour's workers see them: the same services, journal and
    clock, through a transport that the run's fault plan never meets."""

    def __init__(self, services: Services) -> None:
        self.services = services

    @property
    def journal(self) -> Journal:
        return self.services.journal

    @property
    def base_url(self) -> str:
        return self.services.base_url

    def transport(self, *, faults: bool = True) -> httpx.BaseTransport:
        return self.services.transport(faults=False)

    def reset(self) -> None:
        self.services.reset()

    def set_plan(self, plan: FaultPlan) -> None:
        self.services.set_plan(plan)

    def close(self) -> None:
        """The world's services close with the world, never with a neighbour."""


def approved_by(scenario: Scenario, tag: str) -> Scenario:
    """The scenario as a neighbour's approvers answer it: at every gate, an approver of its
    own (`operator+TAG@…`), so what each approval says shows whose it was."""
    gates = {t.step.gate for t in scenario.workflow.transitions if t.step.gate is not None}
    policies = {}
    for gate in sorted(gates):
        policy = scenario.gates.get(gate, GatePolicy())
        local, at, domain = policy.actor.partition("@")
        policies[gate] = replace(policy, actor=f"{local}+{tag}{at}{domain}")
    return replace(scenario, gates=policies)


def tenant_of(main: Run, index: int) -> str:
    """The tenant of the schedule's `index`-th neighbour: the run's own for another workflow,
    the next of `OTHER_TENANTS` (never the run's) for a tenant."""
    if main.schedule.neighbours[index].kind == "workflow":
        return main.world.tenant
    others = [t for t in OTHER_TENANTS if t != main.world.tenant]
    before = main.schedule.neighbours[:index]
    return others[sum(1 for n in before if n.kind == "tenant")]


def neighbour_run(main: Run, index: int) -> Run:
    """The schedule's `index`-th neighbour as a run of the main run's own tier: its own
    workflow id, tenant, approvers and fault-free schedule, the main run's world."""
    spec = main.schedule.neighbours[index]
    tenant = tenant_of(main, index)
    world = replace(
        main.world,
        store=replace(main.world.store, tenant=tenant),
        services=Unplanned(main.world.services),
    )
    schedule = FaultSchedule(
        scenario=main.scenario.name,
        run_id=f"{main.schedule.run_id[:180]}-n{index + 1}",  # a name any input takes (a slug)
        tier=main.schedule.tier,
        engine=main.schedule.engine,
        downtime_s=0.0,
        max_workers=WORKERS,
    )
    tag = tenant if spec.kind == "tenant" else f"n{index + 1}"
    run = type(main)(world, approved_by(main.scenario, tag), schedule, main.engine)
    if spec.kind == "tenant":  # a second tenant's run of the very same order
        run.input = dict(main.input)
    return run


def drive_due(main: Run, worker: int) -> None:
    """Run every neighbour due before `worker` (or before an earlier worker, passed over by a
    pair) that has not run yet, to its end."""
    for index, spec in enumerate(main.schedule.neighbours):
        if spec.before_worker <= worker and index not in main.beside:
            run = neighbour_run(main, index)
            main.beside[index] = run
            run.execute()


def neighbour_records(main: Run) -> list[NeighbourRecord]:
    """What each neighbour that ran left, read now that the run has ended (what the run did
    to it after it ended shows)."""
    journal = main.world.services.journal
    requests, applied = journal.requests(), journal.applied_effects()
    return [
        _record(main.schedule.neighbours[index], run, requests, applied)
        for index, run in sorted(main.beside.items())
    ]


def _record(
    spec: Neighbour,
    run: Run,
    requests: Sequence[RequestRecord],
    applied: Sequence[AppliedEffect],
) -> NeighbourRecord:
    reader, readable = read_records(run)
    checkpoints = reader.checkpoints(run.workflow_id)
    journal = run.world.services.journal
    end = run_ending(run, reader, readable)  # from its durable records, as the run's own
    return NeighbourRecord(
        kind=spec.kind,
        tenant=run.world.tenant,
        workflow_id=run.workflow_id,
        origin=run.origin,
        before_worker=spec.before_worker,
        expected=expected_records(run.scenario.expected_effects(run.input), journal, run.origin),
        expected_status=run.scenario.expected_status.value,
        final_status=end["final_status"],
        failures=run.failures,
        grants=run.grants,
        readable=readable,
        ledger=readable and getattr(reader, "ledger", True),
        checkpoints=checkpoints,
        effects=reader.effects(run.workflow_id),
        approvals=reader.approvals(run.workflow_id),
        requests=[r for r in requests if r.origin == run.origin],
        applied=[e for e in applied if e.origin == run.origin],
    )
