"""The operator view: the dispatcher's next action per effect and a reason for every block."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import BudgetLimits, RunStatus
from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, InProcessServices
from killpoint.harness.cli import known_services
from killpoint.harness.run.killswitch import Killed
from killpoint.reference.dispatcher import Engine
from killpoint.reference.operator_model import (
    Anomaly,
    CheckpointRow,
    CheckpointView,
    OperatorView,
    SealedCheckpoint,
)
from killpoint.reference.operator_view import build_view
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import alter_rows, delete_rows, kill_at, pay_flow, publish_flow
from tests.support.migrations import insert_old, v2_doc

KEY = TEST_KEY.encode()


def view_of(
    store: Store, clock: FakeClock, workflow_id: str = "wf-1", **known: Any
) -> OperatorView:
    return build_view(store, workflow_id, key=KEY, now=clock.now(), tenant="default", **known)


def publish_stopped_at(new_worker: NewWorker, clock: FakeClock, boundary: str) -> None:
    """wf-1, a publish run whose worker died at `boundary` of its create_post step."""
    with contextlib.suppress(Killed):
        new_worker(hook=kill_at(clock, boundary, "create_post")).run(
            "publish", "wf-1", {"slug": "s", "title": "t"}
        )


@dataclass
class Flags:
    idempotent: bool
    queryable: bool
    irreversible: bool


def test_an_irreversible_effect_that_cannot_be_asked_is_escalated(
    new_worker: NewWorker, services: InProcessServices, store: Store, clock: FakeClock
) -> None:
    services.set_plan(
        FaultPlan.of(FaultRule(service="mailer", operation="send", mode=FaultMode.LOST_RESPONSE))
    )
    new_worker().run("notify", "wf-1", {"to": "ops@example.test"})

    view = view_of(store, clock, services=known_services())

    [effect] = view.effects
    assert (effect.status, effect.action) == ("needs_review", "escalate")
    assert any(r.startswith("needs review: mailer send: outcome unknown") for r in view.blocked)
    assert view.checkpoint is not None and view.checkpoint.sealed is not None
    assert view.checkpoint.sealed.pending[0].kind == "review"
    assert view.anomalies == ()


def test_the_action_follows_the_service_flags(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    publish_stopped_at(new_worker, clock, b.STARTED_COMMITTED)
    cases = [
        (Flags(idempotent=False, queryable=True, irreversible=False), "reconcile"),
        (Flags(idempotent=True, queryable=False, irreversible=False), "retry"),
        (Flags(idempotent=False, queryable=False, irreversible=True), "escalate"),
    ]
    for flags, action in cases:
        view = view_of(store, clock, services={"cms": flags})
        assert view.unresolved[0].action == action
    unknown = view_of(store, clock)
    assert "escalate to review if cms cannot be asked" in unknown.unresolved[0].action_detail


def test_a_completed_run_shows_its_receipts_and_no_next_transition(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    new_worker().run("publish", "wf-1", {"slug": "s", "title": "t"})
    view = view_of(store, clock)
    [effect] = view.effects
    assert effect.receipt is not None and effect.action == "none"
    assert view.next_transitions == ()
    assert view.blocked == ("completed: no next transition",)
    assert not view.lease.live
    assert view.anomalies == ()


def test_an_exhausted_budget_is_the_reason_for_the_block(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    new_worker().run("pure", "wf-1", {}, BudgetLimits(steps=1))
    view = view_of(store, clock)
    assert view.blocked == ("budget exhausted: steps budget exhausted",)
    assert view.budget.steps_left == 0
    assert view.anomalies == ()


def test_a_quarantine_of_a_sealed_checkpoint_is_no_anomaly(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    """Quarantine moves the workflow row alone, by design: its status is not a contradiction."""
    with contextlib.suppress(Killed):
        new_worker(hook=kill_at(clock, b.CHECKPOINT_COMMITTED, "plan")).run("pure", "wf-1", {})
    alter_rows(store, "outputs", {"value": "7"}, step="plan")
    clock.advance(31)
    assert new_worker().resume("wf-1").status is RunStatus.QUARANTINED

    view = view_of(store, clock)

    assert view.status is RunStatus.QUARANTINED
    assert view.checkpoint is not None and view.checkpoint.sealed is not None
    assert view.checkpoint.sealed.status is RunStatus.RUNNING
    assert view.anomalies == ()


def test_a_migrated_checkpoint_shows_the_version_it_was_sealed_with(
    store: Store, clock: FakeClock
) -> None:
    insert_old(store, clock, v2_doc(clock))
    view = view_of(store, clock, "wf-old")
    assert view.checkpoint is not None and view.checkpoint.sealed is not None
    assert (view.checkpoint.sealed.schema_version, view.checkpoint.sealed.migrated) == (2, True)
    assert view.anomalies == ()


def test_a_running_workflow_without_a_checkpoint_is_an_anomaly_too(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    engine.start("pure", "wf-1", {})
    delete_rows(store, "checkpoints", workflow_id="wf-1")
    [anomaly] = view_of(store, clock).anomalies
    assert anomaly.kind == "checkpoint_missing"
    assert "nothing to resume from" in anomaly.detail


def test_every_field_of_the_json_view_is_documented_in_the_command_line_guide() -> None:
    readme = (Path(__file__).parents[2] / "docs" / "guide" / "cli.md").read_text()
    table = readme.split("`inspect --json` prints the typed model", 1)[1].split("\n\n", 2)[1]
    documented = set(re.findall(r"`(\w+)(?:\[\])?`", table))
    models = (OperatorView, CheckpointView, CheckpointRow, SealedCheckpoint, Anomaly)
    fields = {name for model in models for name in model.model_fields}
    assert fields - documented == set()


def test_the_next_transition_follows_the_sealed_workflow_name_not_the_row_s(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    publish_stopped_at(new_worker, clock, b.STEP_BEGIN)
    alter_rows(store, "workflows", {"workflow_name": "pay"}, workflow_id="wf-1")

    view = view_of(store, clock, workflows={"publish": publish_flow(), "pay": pay_flow()})

    [transition] = view.next_transitions
    assert (transition.step, transition.kind, transition.target) == (
        "create_post",
        "effect",
        "posted",
    )
    [anomaly] = view.anomalies
    assert (anomaly.column, anomaly.unsealed, anomaly.sealed) == (
        "workflows.workflow_name",
        "pay",
        "publish",
    )
