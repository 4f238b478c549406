"""Neighbours: other runs in a run's world, before the worker the schedule names, fault-free,
signed with their origin, kept apart from the run's own records, in both tiers."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.contract.errors import KillpointError
from killpoint.fake_services import FaultPlan, FaultRule
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.neighbour_plan import kind_for, same_keys_shared
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.run.neighbours import origin_of
from killpoint.harness.run.realtier import open_real_world, run_schedule_real
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint, Neighbour, load_schedule
from killpoint.scenarios import CATALOGUE

CHARGED = HitPoint(worker=0, step="charge", boundary="transport.response_received")


def _schedule(*neighbours: Neighbour, **fields: object) -> FaultSchedule:
    return FaultSchedule.model_validate(
        {"scenario": "approval_refund", "run_id": "beside", "neighbours": neighbours, **fields}
    )


def _run(world: World, schedule: FaultSchedule) -> History:
    return run_schedule(world, CATALOGUE[schedule.scenario], schedule, REFERENCE)


def test_a_second_tenant_runs_the_same_order_before_the_worker_it_names(world: World) -> None:
    history = _run(world, _schedule(Neighbour(kind="tenant", before_worker=1), crashes=(CHARGED,)))
    (other,) = history.neighbours
    assert (other.tenant, other.workflow_id) == ("tenant-b", "approval_refund:beside-n1")
    assert other.final_status == "completed" and len(other.applied) == 2
    # between the run's crash and its recovery: after worker 0's requests, before worker 1's
    first = history.workers[0]
    assert first.journal_seq_end < min(r.seq for r in other.requests)
    assert max(r.seq for r in other.requests) < min(
        r.seq for r in history.requests if r.seq > first.journal_seq_end
    )
    # the same order id, two charges: one each, each signed by its sender
    assert {e.business_key for e in other.applied} >= {"approval-order-beside"}
    assert {r.origin for r in history.requests} == {origin_of("tenant-a", history.workflow_id)}
    assert {r.origin for r in other.requests} == {origin_of("tenant-b", other.workflow_id)}
    assert [a.actor for a in other.approvals] == ["operator+tenant-b@example.test"]
    assert [g.gate for g in history.grants] == ["refund_over_threshold"]  # the run's own only
    assert history.final_status == "completed"


def test_another_workflow_of_the_tenant_has_an_input_of_its_own(world: World) -> None:
    history = _run(world, _schedule(Neighbour(kind="workflow")))
    (other,) = history.neighbours
    assert other.tenant == "tenant-a" and other.workflow_id != history.workflow_id
    assert {e.business_key for e in other.applied} & {
        e.business_key for e in history.applied
    } == set()


def test_a_neighbour_meets_none_of_the_runs_faults(world: World) -> None:
    """The schedule's first charge fails before commit: the run's, though the neighbour charged
    before it; the neighbour's request moved no rule's counter."""
    rule = FaultRule(
        service="payments", operation="create_charge", occurrence=1, mode="error_before_commit"
    )
    history = _run(world, _schedule(Neighbour(kind="tenant"), network=FaultPlan.of(rule)))
    (other,) = history.neighbours
    charges = [r for r in other.requests if r.operation == "create_charge"]
    assert [r.outcome for r in charges] == ["applied"]
    mine = [r for r in history.requests if r.operation == "create_charge"]
    assert mine[0].outcome == "error_before_commit" and mine[-1].outcome == "applied"


def test_a_neighbour_due_before_a_worker_the_run_never_starts_does_not_run(world: World) -> None:
    history = _run(world, _schedule(Neighbour(kind="tenant", before_worker=5)))
    assert history.neighbours == [] and history.final_status == "completed"


def test_a_run_beside_neighbours_replays_to_the_same_history(tmp_path: Path) -> None:
    schedule = _schedule(
        Neighbour(kind="tenant", before_worker=1), Neighbour(kind="workflow"), crashes=(CHARGED,)
    )
    histories = []
    for name in ("a", "b"):
        with World.open(tmp_path / name) as world:
            histories.append(_run(world, schedule))
    assert histories[0].identity() == histories[1].identity()
    assert [n.tenant for n in histories[0].neighbours] == ["tenant-b", "tenant-a"]


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"neighbours": [{"kind": "landlord"}]}, "kind"),
        ({"neighbours": [{"kind": "tenant", "before_worker": 100}]}, "before_worker"),
        ({"neighbours": [{"kind": "tenant", "when": 1}]}, "when"),
        ({"neighbours": [{"kind": "workflow"}] * 5}, "neighbours"),
    ],
)
def test_a_schedule_refuses_neighbours_it_cannot_run(
    tmp_path: Path, fields: dict[str, object], why: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(FaultSchedule(scenario="email", run_id="x").model_copy().model_dump_json())
    body = {**FaultSchedule(scenario="email", run_id="x").model_dump(mode="json"), **fields}
    path.write_text(__import__("json").dumps(body))
    with pytest.raises(KillpointError) as caught:
        load_schedule(path)
    assert why in str(caught.value) and "\n" not in str(caught.value).strip()


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_the_reference_beside_each_kind_of_neighbour_is_judged_true(
    name: str, tmp_path: Path
) -> None:
    """Every catalogue scenario, crashed at its first mutating request's lost-response window,
    beside a neighbour before its recovery and another before it begins."""
    scenario = CATALOGUE[name]
    config = CampaignConfig(scenarios=[scenario], workdir=tmp_path, engine=REFERENCE)
    with Campaign(config) as campaign:
        clean, _ = campaign.judge(scenario, FaultSchedule(scenario=name, run_id="clean"))
        recorded = campaign.judge(scenario, FaultSchedule(scenario=name, run_id="rec"))[1]
        after_send = next(
            (h for h in recorded.hits if h.boundary == "transport.response_received"),
            recorded.hits[0],
        )
        crash = HitPoint(worker=0, step=after_send.step, boundary=after_send.boundary)
        beside = (
            Neighbour(kind=kind_for(scenario), before_worker=1),
            Neighbour(kind="workflow", before_worker=0),
        )
        schedule = FaultSchedule(
            scenario=name, run_id="beside", crashes=(crash,), neighbours=beside
        )
        result, history = campaign.judge(scenario, schedule)
    assert result.valid is True, [v for v in result.verdicts if v.valid is not True]
    assert len(history.neighbours) == 2
    assert {v.checker: v.valid for v in result.verdicts}["isolation"] is True
    assert clean.valid is True


def test_only_scenarios_whose_services_platforms_share_get_a_second_tenant() -> None:
    shared = {name for name, s in CATALOGUE.items() if same_keys_shared(s)}
    assert shared == {"approval_refund", "email", "email_outbox"}


@pytest.mark.realtier
def test_a_neighbour_in_the_real_tier_runs_on_forked_workers_of_its_own(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    schedule = _schedule(Neighbour(kind="tenant", before_worker=1), crashes=(CHARGED,), tier="real")
    with open_real_world(tmp_path / "real", None) as world:
        history = run_schedule_real(world, CATALOGUE["approval_refund"], schedule, REFERENCE)
    (other,) = history.neighbours
    assert history.workers[0].end == "sigkill" and history.final_status == "completed"
    assert other.final_status == "completed" and len(other.applied) == 2
    assert {r.origin for r in other.requests} == {origin_of("tenant-b", other.workflow_id)}
    assert all(r.origin == history.origin for r in history.requests)
