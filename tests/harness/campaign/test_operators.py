"""The exploration's operators: which controls an engine offers, which runs are stops, and a
search that acts on a stop and then crashes the worker in and after its control."""

from __future__ import annotations

from pathlib import Path

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.operators import OperatorSearch, Stop, meaningful, offered, searches
from killpoint.harness.campaign.plan import clean
from killpoint.harness.engines.reference import REFERENCE, reference_factory
from killpoint.harness.operator import CONTROLS
from killpoint.harness.protocol import EngineSpec, QueuedRun
from killpoint.scenarios import CATALOGUE
from tests.support.histories import completed_run, hit, schedule, worker
from tests.support.quiet import Quiet

EMAIL = CATALOGUE["email"]


def test_a_worker_class_with_control_offers_every_control_one_without_none() -> None:
    assert offered(REFERENCE) == CONTROLS
    assert offered(EngineSpec(name="quiet", factory=Quiet)) == ()
    # a plain factory is tried: its first run says whether it took a control
    assert offered(EngineSpec(name="f", factory=reference_factory)) == CONTROLS


def test_no_control_that_needs_what_the_workflow_lacks() -> None:
    assert meaningful(CONTROLS, EMAIL.workflow) == ("reconcile", "retry", "branch", "terminate")
    saga = CATALOGUE["order_saga"].workflow  # a compensating step, no approval gate
    assert "compensate" in meaningful(CONTROLS, saga)
    assert "request-approval" in meaningful(CONTROLS, CATALOGUE["approval_refund"].workflow)


def test_a_run_is_a_stop_where_its_durable_end_waits_for_a_person() -> None:
    stopped = completed_run(
        final_status="needs_review",
        workers=[worker(0, "killed", None), worker(1, status="needs_review")],
        hits=[hit("lease.acquired", 1.0, worker=1), hit("step.begin", 1.0, worker=1)],
        queued=QueuedRun(workflow_id="w", reason="needs_review", in_doubt=["charge/charge"]),
    )
    stop = Stop.of(stopped)
    assert stop is not None
    assert (stop.worker, stop.hits, stop.key, stop.allowed) == (
        1,
        2,
        ("needs_review", True),
        None,
    )
    assert Stop.of(completed_run()) is None  # completed: no one waits
    operated = stopped.model_copy(update={"schedule": schedule(controls=["terminate"])})
    assert Stop.of(operated) is None  # a run an operator already acted on
    said_only = stopped.model_copy(update={"final_status": "running"})
    assert Stop.of(said_only) is None  # its worker's word is no stop


def test_a_search_acts_on_a_stop_then_kills_the_worker_in_and_after_its_control(
    tmp_path: Path,
) -> None:
    config = CampaignConfig(scenarios=[EMAIL], workdir=tmp_path, engine=REFERENCE)
    with Campaign(config) as campaign:
        campaign.judge(EMAIL, clean(EMAIL).schedule, "clean")
        for case in EMAIL.cases:
            campaign.judge(EMAIL, case.schedule, "named", case.expect)
        (search,) = searches(campaign, [EMAIL], explored=False)
        results = list(search.run())
    assert [s.key for s in search.stops] == [("needs_review", True)]  # the mail in doubt
    acted = [r for r in results if r.controls and " refused" not in r.controls[-1]]
    assert {r.schedule.controls for r in acted} == {("terminate",)}  # the one the rules allow
    killed = [r for r in acted if len(r.schedule.crashes) > len(search.stops[0].schedule.crashes)]
    assert len(killed) >= 2 and any(r.controls[0] == "terminate: in flight" for r in killed)
    assert all(r.valid is not False for r in results), [r.verdicts for r in results]


def test_the_operators_are_off_when_told() -> None:
    config = CampaignConfig(scenarios=[EMAIL], workdir=Path("x"), engine=REFERENCE, operators=False)
    assert searches(_Unopened(config), [EMAIL]) == []  # type: ignore[arg-type]


class _Unopened:
    """What `searches` reads of a campaign, without a world."""

    def __init__(self, config: CampaignConfig) -> None:
        self.config = config


def test_a_search_needs_a_stop_to_act_on(tmp_path: Path) -> None:
    config = CampaignConfig(scenarios=[EMAIL], workdir=tmp_path, engine=REFERENCE)
    with Campaign(config) as campaign:
        search = OperatorSearch(
            EMAIL,
            campaign.judge,
            lambda s: campaign.judge(EMAIL, s)[1],
            [(clean(EMAIL).schedule, None)],  # the recording completes: no stop
            CONTROLS,
        )
        assert list(search.run()) == [] and search.stops == []
