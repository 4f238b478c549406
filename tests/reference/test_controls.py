"""Operator controls, each allowed and refused, audited, on both backends (SQLite and PostgreSQL:
the `store` fixture is parametrized)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import EffectStatus, RunStatus
from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, InProcessServices
from killpoint.harness.run.killswitch import Killed
from killpoint.reference import ControlRefused, Controls, audit_trail
from killpoint.reference.control_rules import allowed
from killpoint.reference.errors import WrongTenantError
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import kill_at

LAPSE = 31.0  # past the 30 s lease of a dead worker


def died_at(
    new_worker: NewWorker, clock: FakeClock, flow: str, boundary: str, step: str | None
) -> None:
    """wf-1 of `flow`, whose worker died at `boundary`, its lease lapsed since."""
    inputs = {
        "publish": {"slug": "s", "title": "t"},
        "pay": {"order_id": "o-1"},
        "notify": {"to": "ops@example.test"},
    }
    worker = new_worker(hook=kill_at(clock, boundary, step))
    if flow == "pay":
        worker.start("pay", "wf-1", inputs[flow])
        worker.resume("wf-1")
        worker.grant("wf-1", "pay", "alice", 3600)
    with contextlib.suppress(Killed):
        worker.run(flow, "wf-1", inputs[flow])
    clock.advance(LAPSE)


def controls(new_worker: NewWorker, actor: str = "bob", **kwargs: Any) -> Controls:
    return Controls(new_worker(**kwargs), actor)


def test_reconcile_asks_the_service_and_hands_the_run_back(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    died_at(new_worker, clock, "publish", b.RESPONSE_READ, "create_post")
    ops = controls(new_worker)
    assert "reconcile" in _allowed(ops) and ops.refusal("reconcile", "wf-1") is None

    outcome = ops.reconcile("wf-1", "worker died after the post was made")

    [effect] = store.effects("wf-1")
    assert effect.status is EffectStatus.COMMITTED  # found by its key: not sent again
    assert outcome.status is RunStatus.RUNNING
    assert new_worker().resume("wf-1").status is RunStatus.COMPLETED
    assert len(services.journal.applied_effects("cms")) == 1
    [audit] = audit_trail(store, "wf-1")
    assert (audit.control, audit.actor, audit.reason) == (
        "reconcile",
        "bob",
        "worker died after the post was made",
    )
    assert (audit.from_status, audit.to_status) == (RunStatus.RUNNING, RunStatus.RUNNING)
    assert audit.to_sequence == audit.from_sequence + 1 == outcome.sequence


def test_reconcile_is_refused_when_nothing_is_in_doubt(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    died_at(new_worker, clock, "publish", b.STEP_BEGIN, "create_post")
    with pytest.raises(ControlRefused, match="no effect is in doubt"):
        controls(new_worker).reconcile("wf-1", "just checking")
    assert audit_trail(store, "wf-1") == []


def test_retry_sends_again_with_the_same_key_where_the_service_dedups(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    died_at(new_worker, clock, "pay", b.STARTED_COMMITTED, "charge")
    [before] = store.effects("wf-1")

    outcome = controls(new_worker).retry("wf-1", "the charge may not have gone out")

    [after] = store.effects("wf-1")
    assert after.status is EffectStatus.COMMITTED
    assert after.idempotency_key == before.idempotency_key
    assert outcome.status is RunStatus.RUNNING
    assert new_worker().resume("wf-1").status is RunStatus.COMPLETED
    assert len(services.journal.applied_effects("payments")) == 1
    assert [a.control for a in audit_trail(store, "wf-1")] == ["retry"]


def test_retry_of_an_irreversible_effect_in_doubt_is_refused(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    services.set_plan(
        FaultPlan.of(FaultRule(service="mailer", operation="send", mode=FaultMode.LOST_RESPONSE))
    )
    assert new_worker().run("notify", "wf-1", {"to": "o@x.test"}).status is RunStatus.NEEDS_REVIEW
    ops = controls(new_worker)

    with pytest.raises(ControlRefused, match=r"irreversible.*could apply it twice"):
        ops.retry("wf-1", "try again")

    assert len(services.journal.applied_effects("mailer")) == 1
    assert store.workflow("wf-1").status is RunStatus.NEEDS_REVIEW
    assert audit_trail(store, "wf-1") == []
    assert "retry" not in _allowed(ops) and "terminate" in _allowed(ops)


def test_terminate_ends_the_run_with_the_reason_and_is_refused_after(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    services.set_plan(
        FaultPlan.of(FaultRule(service="mailer", operation="send", mode=FaultMode.LOST_RESPONSE))
    )
    new_worker().run("notify", "wf-1", {"to": "o@x.test"})
    ops = controls(new_worker)

    outcome = ops.terminate("wf-1", "the customer got the mail: checked by phone")

    assert outcome.status is RunStatus.FAILED
    assert outcome.reason == "terminated by bob: the customer got the mail: checked by phone"
    with pytest.raises(ControlRefused, match="the run is failed"):
        ops.terminate("wf-1", "again")
    assert new_worker().resume("wf-1").status is RunStatus.FAILED
    [audit] = audit_trail(store, "wf-1")
    assert (audit.from_status, audit.to_status) == (RunStatus.NEEDS_REVIEW, RunStatus.FAILED)


def test_request_approval_revokes_the_grant_and_goes_back_to_the_gate(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    died_at(new_worker, clock, "pay", b.STEP_BEGIN, "charge")

    outcome = controls(new_worker).request_approval("wf-1", "the amount changed")

    assert (outcome.status, outcome.state) == (RunStatus.WAITING_APPROVAL, "start")
    [approval] = store.approvals("wf-1")
    assert approval.status == "requested"
    worker = new_worker()
    assert worker.resume("wf-1").status is RunStatus.WAITING_APPROVAL  # no charge sent
    assert services.journal.applied_effects("payments") == []
    worker.grant("wf-1", "pay", "carol", 3600)
    assert worker.resume("wf-1").status is RunStatus.COMPLETED


def test_request_approval_is_refused_for_a_workflow_without_a_gate(
    new_worker: NewWorker, clock: FakeClock
) -> None:
    died_at(new_worker, clock, "publish", b.STEP_BEGIN, "create_post")
    with pytest.raises(ControlRefused, match="has no approval gate"):
        controls(new_worker).request_approval("wf-1", "why not")


def test_branch_starts_a_lineage_whose_parent_is_the_last_committed_run(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    died_at(new_worker, clock, "publish", b.STEP_BEGIN, "create_post")
    before = store.latest_checkpoint("wf-1")
    assert before is not None

    outcome = controls(new_worker).branch("wf-1", "start over from the draft")

    after = store.latest_checkpoint("wf-1")
    assert after is not None
    cp = new_worker().open(after, TEST_KEY.encode())
    assert cp.lineage.parent_run_id == before.run_id and cp.lineage.decision == "branch"
    assert outcome.sequence == before.sequence + 1
    assert new_worker().resume("wf-1").status is RunStatus.COMPLETED


def test_branch_is_refused_while_an_effect_is_in_doubt(
    new_worker: NewWorker, clock: FakeClock
) -> None:
    died_at(new_worker, clock, "publish", b.STARTED_COMMITTED, "create_post")
    with pytest.raises(ControlRefused, match="in doubt: a branch would stop on it again"):
        controls(new_worker).branch("wf-1", "skip it")


def test_a_control_needs_a_reason_and_refuses_an_unknown_control(
    new_worker: NewWorker, clock: FakeClock
) -> None:
    died_at(new_worker, clock, "publish", b.STEP_BEGIN, "create_post")
    ops = controls(new_worker)
    with pytest.raises(Exception, match="needs a reason"):
        ops.terminate("wf-1", "  ")
    with pytest.raises(ControlRefused, match="no control 'force-complete'"):
        ops.act("force-complete", "wf-1", "it is fine")


def test_another_tenant_s_workflow_is_refused_before_anything_is_read(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    died_at(new_worker, clock, "publish", b.STEP_BEGIN, "create_post")
    sequence = store.workflow("wf-1").sequence
    with pytest.raises(WrongTenantError):
        controls(new_worker, tenant="tenant-b").terminate("wf-1", "not mine")
    assert store.workflow("wf-1").sequence == sequence
    assert audit_trail(store, "wf-1") == []


def _allowed(ops: Controls) -> tuple[str, ...]:
    return allowed(ops.facts("wf-1")[0])
