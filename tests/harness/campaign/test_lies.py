"""Lying start messages: what each kind says, where the plan and the exploration tell them, and
how the runner delivers them (to the worker, or to a worker of another tenant) and records them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from pydantic import JsonValue

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.explore import Budget
from killpoint.harness.campaign.plan import Plan, PlanOptions, clean, doubles, interleavings
from killpoint.harness.campaign.searches import exploration
from killpoint.harness.engines.reference import REFERENCE, ReferenceEngine
from killpoint.harness.history import History
from killpoint.harness.lies import FORGED_ACTOR, LIAR_TENANT, kinds_for, lying_message, sampled
from killpoint.harness.protocol import SHARED_PROCESS, EngineSpec, WorkerEnv
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint, Lie
from killpoint.scenarios import CATALOGUE
from tests.support.plans import RANKED, RECORDING, SAGA, explored, recovered

REFUND = CATALOGUE["approval_refund"]
ORIGINAL = dict(REFUND.make_input("r1"))


def test_each_kind_of_lie_says_what_the_original_did_not_and_marks_only_that() -> None:
    raised = lying_message(REFUND, "r1", ORIGINAL, "amount")
    assert raised.content["refund_cents"] == 24_001 and raised.content["amount_cents"] == 50_001
    assert raised.content["order_id"] == ORIGINAL["order_id"] and raised.tenant is None
    assert set(raised.marks) == {24_001, 50_001}
    renamed = lying_message(REFUND, "r1", ORIGINAL, "target")
    assert renamed.content["order_id"] == "approval-order-r1-lie-edited"
    assert renamed.marks == (
        "approval-order-r1-lie-edited",
    )  # "EUR" and the reason stay as they were
    other = lying_message(REFUND, "r1", ORIGINAL, "workflow")
    assert other.content == dict(REFUND.make_input("r1-lie-other")) and other.tenant is None
    claimed = lying_message(REFUND, "r1", ORIGINAL, "tenant")
    assert claimed.tenant == LIAR_TENANT and claimed.marks == ("approval-order-r1-lie-tenant-b",)
    forged = lying_message(REFUND, "r1", ORIGINAL, "approval")
    assert forged.content["approvals"] == [
        {
            "gate": "refund_over_threshold",
            "status": "granted",
            "actor": FORGED_ACTOR,
            "expires_at": 10.0**9,
        }
    ]
    assert forged.marks == (FORGED_ACTOR,)  # the gate's name is the scenario's, not the lie's
    assert lying_message(REFUND, "r1", ORIGINAL, "amount") == raised  # a replay tells the same


def test_a_scenario_is_told_the_lies_that_can_show() -> None:
    assert kinds_for(REFUND) == ("amount", "target", "workflow", "tenant", "approval")
    # an email has no amount to raise and no gate to claim
    assert kinds_for(CATALOGUE["email"]) == ("target", "workflow", "tenant")


def test_each_kind_is_told_at_each_phase_on_its_riskiest_crash_one_kind_to_a_crash() -> None:
    hits = [h for h in RECORDING.hits if h.worker == 0]
    risks = [RANKED.index(n) for n in range(len(hits))]  # lower: riskier
    told = sampled(SAGA, hits, risks, seed=0)
    assert told == sampled(SAGA, hits, risks, seed=0)
    flat = [(n, lie) for n, lies in told.items() for lie in lies]
    kinds = kinds_for(SAGA)
    phases = 1 + len({h.step for h in hits}) + 1  # the start, each step and between, the end
    assert len(flat) == len(kinds) * phases
    for kind in kinds:
        workers = sorted(lie.worker for _, lie in flat if lie.kind == kind)
        assert workers == [0] + [1] * (phases - 2) + [2]
    assert told[RANKED[0]][0] == Lie(worker=0, kind="target")  # the riskiest crash first
    assert len(told) == len(hits)  # spread over every crash before any gets a second…
    assert len(told[0]) == len(kinds)  # …but where a phase has one crash (the lease), it has all


def test_the_plan_tells_singles_lies_but_not_their_pairs_and_doubles_and_none_when_off() -> None:
    for lies in (True, False):
        plan = Plan([SAGA], PlanOptions(lies=lies))
        plan.observe(clean(SAGA), RECORDING)
        runs = [r for r in plan.shallow() if r.kind == "single"]
        told = [r for r in runs if r.schedule.lies]
        assert bool(told) is lies
        for run in runs:
            plan.observe(run, recovered(run, 2))
        recoveries = plan.recoveries["saga"]
        total = len(runs)
        later = [*doubles(SAGA, recoveries, plan.options, total)]
        later += interleavings(SAGA, recoveries, plan.options, total)
        assert later and not any(r.schedule.lies for r in later)


def test_the_exploration_draws_lies_only_when_asked(tmp_path: Path) -> None:
    found = explored(tmp_path / "on", REFERENCE, "email", "12")
    assert any(r.schedule.lies for r in found)
    assert all(r.valid is True for r in found)
    config = CampaignConfig([CATALOGUE["email"]], tmp_path / "off", REFERENCE, lies=False)
    plan = Plan(config.scenarios, config.plan_options())
    assert plan.options.lies is False
    with Campaign(config) as campaign:
        plan.observe(
            clean(CATALOGUE["email"]), campaign.execute_planned(clean(CATALOGUE["email"]))[1]
        )
        [search] = exploration(campaign, plan, config.scenarios, Budget(runs=8))
        assert search.lies is False
        assert not any(r.schedule.lies for r in search.run())


Starts = list[tuple[str, str, dict[str, JsonValue]]]


class _Spy(ReferenceEngine):
    """The reference's workers, each start they take written down: (tenant, owner, input)."""

    starts: Starts = []

    def __init__(self, env: WorkerEnv, scenario: Scenario) -> None:
        super().__init__(env, scenario)
        self.env = env

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        self.starts.append((self.env.tenant, self.env.owner, dict(input)))
        return super().start(scenario, workflow_id, input)


def _spied(root: Path, schedule: FaultSchedule, spec: EngineSpec) -> tuple[History, Starts]:
    _Spy.starts = []
    scenario = CATALOGUE[schedule.scenario]
    with Campaign(CampaignConfig([scenario], root, spec)) as campaign:
        result, history = campaign.execute(scenario, schedule, "single")
    assert result.valid is not False, [v for v in result.verdicts if v.valid is not True]
    return history, list(_Spy.starts)


def test_a_lie_reaches_the_worker_and_another_tenant_s_claim_a_worker_of_that_tenant(
    tmp_path: Path,
) -> None:
    crash = HitPoint(worker=0, step="charge", boundary="effect.started")
    lies = (Lie(worker=1, kind="amount"), Lie(worker=1, kind="tenant"))
    schedule = FaultSchedule(scenario="order_saga", run_id="spied", crashes=(crash,), lies=lies)
    spec = dataclasses.replace(REFERENCE, factory=_Spy)
    history, starts = _spied(tmp_path / "a", schedule, spec)
    original = dict(CATALOGUE["order_saga"].make_input("spied"))
    assert starts == [
        ("tenant-a", "worker-0", original),
        ("tenant-a", "worker-1", {**original, "amount_cents": 8401}),
        (LIAR_TENANT, f"{LIAR_TENANT}-worker-1", dict(CATALOGUE["order_saga"].make_input(
            f"spied-lie-{LIAR_TENANT}"))),
    ]  # fmt: skip
    assert [(x.worker, x.kind, x.tenant, x.marks) for x in history.lies] == [
        (1, "amount", "tenant-a", [8401]),
        (
            1,
            "tenant",
            LIAR_TENANT,
            [f"order-spied-lie-{LIAR_TENANT}", f"shipment-spied-lie-{LIAR_TENANT}"],
        ),
    ]
    # after worker 0's requests: none had come, the charge was about to be sent
    assert {x.journal_seq for x in history.lies} == {0}
    single = dataclasses.replace(spec, lacks=frozenset({SHARED_PROCESS}))
    history, starts = _spied(tmp_path / "b", schedule, single)
    assert [s[0] for s in starts] == ["tenant-a", "tenant-a"]  # no second engine in the process
    assert [x.delivered for x in history.lies] == [True, False]


def test_a_lie_after_the_end_gets_a_worker_of_its_own(tmp_path: Path) -> None:
    schedule = FaultSchedule(scenario="email", run_id="late", lies=(Lie(worker=2, kind="target"),))
    spec = dataclasses.replace(REFERENCE, factory=_Spy)
    history, starts = _spied(tmp_path, schedule, spec)
    assert [w.worker for w in history.workers] == [0, 1, 2]
    assert [s[1] for s in starts] == ["worker-0", "worker-2"]
