"""Histories and scenarios the plan's tests build by hand, and the exploration's runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from killpoint.contract import boundaries as b
from killpoint.contract.records import BudgetLimits
from killpoint.fake_services.journal import RequestRecord
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.explore import Exploration
from killpoint.harness.campaign.plan import (
    Plan,
    PlannedRun,
)
from killpoint.harness.campaign.searches import exploration
from killpoint.harness.history import History, HitRecord
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import RunResult
from killpoint.harness.scenario import NamedCase, Scenario
from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios import CATALOGUE

Hit = tuple[int, str | None, str, int]  # worker, step, boundary, journal position


def planned_searches(
    tmp_path: Path, engine: EngineSpec, scenario: str, explore: str, seed: int = 0
) -> tuple[Campaign, list[Exploration]]:
    config = CampaignConfig(
        scenarios=[CATALOGUE[scenario]],
        workdir=tmp_path,
        engine=engine,
        explore=explore,
        seed=seed,
        double=False,
        interleave=False,
    )
    campaign = Campaign(config)
    plan = Plan(config.scenarios, config.plan_options())
    for planned in plan.shallow():
        plan.observe(planned, campaign.execute_planned(planned)[1])
    return campaign, exploration(campaign, plan, config.scenarios)


def explored(
    tmp_path: Path, engine: EngineSpec, scenario: str, explore: str, seed: int = 0
) -> list[RunResult]:
    campaign, searches = planned_searches(tmp_path, engine, scenario, explore, seed)
    with campaign:
        return [found for search in searches for found in search.run()]


def history_of(name: str, hits: Iterable[Hit], requests: Iterable[tuple[str, str]] = ()) -> History:
    """A history with these hits (occurrences counted per worker, step and boundary) and these
    requests (journal positions 1, 2, …)."""
    seen: Counter[tuple[int, str | None, str]] = Counter()
    records = []
    for worker, step, boundary, seq in hits:
        seen[(worker, step, boundary)] += 1
        records.append(
            HitRecord(
                worker=worker,
                step=step,
                boundary=boundary,
                occurrence=seen[(worker, step, boundary)],
                time=0.0,
                journal_seq=seq,
            )
        )
    return History(
        scenario=name,
        workflow_id=f"{name}:hand-built",
        schedule=FaultSchedule(scenario=name, run_id="clean"),
        limits=BudgetLimits(),
        expected=[],
        hits=records,
        workers=[],
        checkpoints=[],
        effects=[],
        approvals=[],
        requests=[
            RequestRecord(n, service, operation, None, None, "f", 0.0, "ok")
            for n, (service, operation) in enumerate(requests, start=1)
        ],
        applied=[],
        final_status="completed",
        final_state="done",
    )


def scenario_named(name: str, *cases: NamedCase) -> Scenario:
    return replace(CATALOGUE["email"], name=name, cases=cases)


SAGA = scenario_named("saga")


# lease, charge (its request delivered before hit 3), a verify read, ship (delivered before 9)
RECORDING = history_of(
    "saga",
    [
        (0, None, b.LEASE_ACQUIRED, 0),
        (0, "charge", b.STEP_BEGIN, 0),
        (0, "charge", b.INTENT_COMMITTED, 0),
        (0, "charge", b.RESPONSE_RECEIVED, 1),
        (0, "charge", b.RECEIPT_COMMITTED, 1),
        (0, "charge", b.CHECKPOINT_COMMITTED, 1),
        (0, "verify", b.STEP_BEGIN, 1),
        (0, "verify", b.VERIFY_READ, 2),
        (0, "ship", b.STEP_BEGIN, 2),
        (0, "ship", b.RESPONSE_RECEIVED, 3),
        (0, "ship", "vendor.saved", 3),
    ],
    [("payments", "create_charge"), ("payments", "charge_by_key"), ("mailer", "send")],
)


RANKED = [3, 9, 2, 4, 10, 0, 1, 5, 6, 7, 8]  # delivered, protocol (or unknown), routine


def recovered(run: PlannedRun, hits: int) -> History:
    """A single crash's run: its first recovery went through `hits` hits (reconciling first)."""
    steps = [(1, "charge", b.RECONCILE_LOOKED_UP, 1)] + [(1, "ship", b.STEP_BEGIN, 1)] * (hits - 1)
    return history_of(run.scenario.name, steps)
