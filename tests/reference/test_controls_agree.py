"""`inspect` lists exactly the controls that act: for each stuck run and each control, the
view's list and the control's own refusal agree, on both backends."""

from __future__ import annotations

import contextlib

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, InProcessServices
from killpoint.harness.run.killswitch import Killed
from killpoint.reference import ControlRefused, Controls
from killpoint.reference.control_rules import CONTROLS
from killpoint.reference.errors import LeaseHeldError
from killpoint.reference.operator_view import build_view
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import kill_at

STUCK = {
    # run name -> (flow, its input, the boundary its worker dies at, the step, lapse the lease)
    "publish-in-doubt": (
        "publish",
        {"slug": "s", "title": "t"},
        b.STARTED_COMMITTED,
        "create_post",
    ),
    "publish-before": ("publish", {"slug": "s", "title": "t"}, b.STEP_BEGIN, "create_post"),
    "pay-in-doubt": ("pay", {"order_id": "o-1"}, b.STARTED_COMMITTED, "charge"),
}


def _stuck(new_worker: NewWorker, clock: FakeClock, name: str, workflow_id: str) -> None:
    flow, given, boundary, step = STUCK[name]
    worker = new_worker(hook=kill_at(clock, boundary, step))
    if flow == "pay":
        worker.start("pay", workflow_id, given)
        worker.resume(workflow_id)
        worker.grant(workflow_id, "pay", "alice", 3600)
    with contextlib.suppress(Killed):
        worker.run(flow, workflow_id, given)


@pytest.mark.parametrize("name", sorted(STUCK))
def test_the_view_lists_a_control_exactly_when_it_acts(
    new_worker: NewWorker, store: Store, clock: FakeClock, name: str
) -> None:
    """One stuck run per control, each acted on once: listed if and only if it acted (under
    a live lease none is listed: tests/reference/test_controls_fencing.py)."""
    for control in CONTROLS:
        _stuck(new_worker, clock, name, control)
    clock.advance(31.0)
    worker = new_worker()
    for control in CONTROLS:
        view = build_view(
            store,
            control,
            key=TEST_KEY.encode(),
            now=clock.now(),
            tenant="default",
            services=worker.steps.adapters,
            workflows=worker.workflows,
        )
        listed = control in view.controls
        assert listed != (control in view.refused_controls)
        try:
            Controls(worker, "bob").act(control, control, "agreeing")
            acted = True
        except (ControlRefused, LeaseHeldError):
            acted = False
        assert listed == acted, (control, view.refused_controls.get(control))


def test_a_mail_in_doubt_allows_only_terminate(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    services.set_plan(
        FaultPlan.of(FaultRule(service="mailer", operation="send", mode=FaultMode.LOST_RESPONSE))
    )
    worker = new_worker()
    worker.run("notify", "wf-1", {"to": "o@x.test"})
    view = build_view(
        store,
        "wf-1",
        key=TEST_KEY.encode(),
        now=clock.now(),
        tenant="default",
        services=worker.steps.adapters,
        workflows=worker.workflows,
    )
    assert view.controls == ("terminate",)
    assert "could apply it twice" in view.refused_controls["retry"]
    assert "cannot be asked" in view.refused_controls["reconcile"]
