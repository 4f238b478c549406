"""Resume, end to end: crash a worker at a boundary, start a new one, check the ground truth.

Effects go to the real fake services in-process; their journal, not the engine's ledger, says
what happened outside. A crash is the product's kill-switch raising `Killed` (a
`BaseException`); the dead worker's objects are dropped and a new Engine with its own Store
takes over once the lease has expired.
"""

from __future__ import annotations

from typing import Any

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, InProcessServices
from killpoint.harness.run.killswitch import Killed
from killpoint.harness.schedule import HitPoint
from killpoint.reference.checkpoint import open_checkpoint
from killpoint.reference.errors import LeaseHeldError, StaleFenceError
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import kill_at, recording
from tests.support.seals import flip_one_byte

KEY = TEST_KEY.encode()
POST = {"slug": "hello-world", "title": "Hello"}
ORDER = {"order_id": "order-7"}


def fail(services: InProcessServices, service: str, operation: str, mode: FaultMode) -> None:
    services.set_plan(
        FaultPlan.of(FaultRule(service=service, operation=operation, occurrence=1, mode=mode))
    )


def sequences(store: Store, workflow_id: str) -> list[int]:
    return [c.sequence for c in store.checkpoints(workflow_id)]


def test_an_uninterrupted_run_completes_with_one_verified_effect(
    new_worker: NewWorker, services: InProcessServices, store: Store
) -> None:
    outcome = new_worker().run("publish", "wf-1", POST)

    assert (outcome.status, outcome.state) == (RunStatus.COMPLETED, "done")
    assert sequences(store, "wf-1") == [1, 2, 3, 4]
    [effect] = store.effects("wf-1")
    assert effect.status == "verified" and effect.receipt is not None
    assert [e.business_key for e in services.journal.applied_effects("cms")] == ["hello-world"]
    assert store.workflow("wf-1").lease_owner is None


def test_every_boundary_of_an_effect_step_is_hit_in_order(
    new_worker: NewWorker, clock: FakeClock
) -> None:
    recorder, hits = recording(clock)
    new_worker(hook=recorder).run("publish", "wf-1", POST)
    effect_hits = [h.boundary for h in hits if h.step == "create_post"]
    assert effect_hits == [
        b.STEP_BEGIN,
        b.INTENT_BUILT,
        b.INTENT_COMMITTED,
        b.STARTED_COMMITTED,
        b.RESPONSE_READ,
        b.RECEIPT_COMMITTED,
        b.CHECKPOINT_BUILT,
        b.CHECKPOINT_COMMITTED,
    ]


def test_a_crash_between_commit_and_receipt_is_reconciled_without_a_second_post(
    new_worker: NewWorker, services: InProcessServices, store: Store, clock: FakeClock
) -> None:
    with pytest.raises(Killed) as killed:
        new_worker(hook=kill_at(clock, b.RESPONSE_READ, "create_post")).run("publish", "wf-1", POST)
    assert killed.value.point == HitPoint(worker=0, step="create_post", boundary=b.RESPONSE_READ)
    [before] = store.effects("wf-1")
    assert before.status == "started"  # the service has the post; the ledger does not know yet

    clock.advance(31)
    outcome = new_worker().resume("wf-1")

    assert outcome.status is RunStatus.COMPLETED
    [after] = store.effects("wf-1")
    assert after.idempotency_key == before.idempotency_key
    assert after.status == "verified" and after.attempts == 1
    assert len(services.journal.applied_effects("cms")) == 1
    assert [r.operation for r in services.journal.requests("cms")] == [
        "create_post",
        "posts_by_slug",
        "get_post",
    ]


@pytest.mark.parametrize(
    "boundary",
    [b.INTENT_BUILT, b.INTENT_COMMITTED, b.STARTED_COMMITTED, b.RESPONSE_READ, b.RECEIPT_COMMITTED],
)
def test_the_idempotency_key_is_identical_before_and_after_a_resume(
    boundary: str,
    new_worker: NewWorker,
    services: InProcessServices,
    store: Store,
    clock: FakeClock,
) -> None:
    new_worker().run("pay", "wf-ref", ORDER)
    new_worker().grant("wf-ref", "pay", "alice", ttl_s=3600)
    new_worker().resume("wf-ref")
    [reference] = store.effects("wf-ref")

    first = new_worker(hook=kill_at(clock, boundary, "charge"))
    first.run("pay", "wf-1", ORDER)  # stops at the gate
    first.grant("wf-1", "pay", "alice", ttl_s=3600)
    with pytest.raises(Killed):
        first.resume("wf-1")
    keys_before = {e.idempotency_key for e in store.effects("wf-1")}
    clock.advance(31)
    outcome = new_worker().resume("wf-1")

    assert outcome.status is RunStatus.COMPLETED
    [effect] = store.effects("wf-1")
    assert keys_before <= {effect.idempotency_key}
    assert effect.idempotency_key != reference.idempotency_key  # keyed by workflow id too
    charges = [
        e for e in services.journal.applied_effects("payments") if e.business_key == "order-7"
    ]
    assert [c.idempotency_key for c in charges] == [
        reference.idempotency_key,
        effect.idempotency_key,
    ]
    assert all(
        r.idempotency_key == effect.idempotency_key
        for r in services.journal.requests("payments")
        if r.operation == "create_charge" and r.idempotency_key != reference.idempotency_key
    )


def test_one_changed_byte_mid_run_stops_the_run_before_any_request(
    new_worker: NewWorker, services: InProcessServices, store: Store, clock: FakeClock
) -> None:
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.CHECKPOINT_COMMITTED, "draft")).run(
            "publish", "wf-1", POST
        )
    flip_one_byte(store, "wf-1", 2)
    clock.advance(31)

    outcome = new_worker().resume("wf-1")

    assert outcome.status is RunStatus.QUARANTINED
    assert "integrity" in outcome.reason
    assert services.journal.requests() == []
    assert store.effects("wf-1") == []
    assert sequences(store, "wf-1") == [1, 2]


def test_a_lost_response_becomes_unknown_and_is_reconciled_by_key(
    new_worker: NewWorker, services: InProcessServices, store: Store
) -> None:
    new_worker().run("pay", "wf-1", ORDER)
    new_worker().grant("wf-1", "pay", "alice", ttl_s=3600)
    fail(services, "payments", "create_charge", FaultMode.LOST_RESPONSE)

    outcome = new_worker().resume("wf-1")

    assert outcome.status is RunStatus.COMPLETED
    log = [row.status for row in store.effect_log("wf-1")]
    assert log[:4] == ["prepared", "started", "unknown", "committed"]
    assert "failed" not in log
    [effect] = store.effects("wf-1")
    assert len(services.journal.applied_effects("payments")) == 1
    assert services.journal.attempts(effect.idempotency_key) == 1  # one delivery of the charge
    assert [r.operation for r in services.journal.requests("payments")][:2] == [
        "create_charge",
        "charge_by_key",
    ]


def test_a_timeout_before_commit_is_unknown_then_confirmed_absent_and_retried_with_the_same_key(
    new_worker: NewWorker, services: InProcessServices, store: Store
) -> None:
    new_worker().run("pay", "wf-1", ORDER)
    new_worker().grant("wf-1", "pay", "alice", ttl_s=3600)
    fail(services, "payments", "create_charge", FaultMode.TIMEOUT_BEFORE_COMMIT)

    outcome = new_worker().resume("wf-1")

    assert outcome.status is RunStatus.COMPLETED
    [effect] = store.effects("wf-1")
    assert effect.attempts == 2
    log = store.effect_log("wf-1")
    assert [row.status for row in log][:6] == [
        "prepared",
        "started",
        "unknown",
        "prepared",
        "started",
        "committed",
    ]
    assert "confirmed absent" in log[3].detail
    charges = [r for r in services.journal.requests("payments") if r.operation == "create_charge"]
    assert [(r.idempotency_key, r.outcome) for r in charges] == [
        (effect.idempotency_key, "timeout_before_commit"),
        (effect.idempotency_key, "applied"),
    ]
    assert len(services.journal.applied_effects("payments")) == 1


def test_a_lost_response_from_the_non_idempotent_cms_is_found_by_its_slug(
    new_worker: NewWorker, services: InProcessServices, store: Store
) -> None:
    fail(services, "cms", "create_post", FaultMode.LOST_RESPONSE)
    outcome = new_worker().run("publish", "wf-1", POST)
    assert outcome.status is RunStatus.COMPLETED
    assert len(services.journal.applied_effects("cms")) == 1


def test_an_irreversible_unknown_that_cannot_be_asked_stops_for_review(
    new_worker: NewWorker, services: InProcessServices, store: Store, clock: FakeClock
) -> None:
    fail(services, "mailer", "send", FaultMode.LOST_RESPONSE)

    outcome = new_worker().run("notify", "wf-1", {"to": "ops@example.test"})

    assert outcome.status is RunStatus.NEEDS_REVIEW
    assert "irreversible" in outcome.reason and "cannot be asked" in outcome.reason
    [effect] = store.effects("wf-1")
    assert effect.status == "needs_review"
    cp = open_checkpoint(store.checkpoints("wf-1")[-1], KEY, "default")
    assert [(p.kind, p.detail) for p in cp.pending] == [("review", outcome.reason)]
    # A later resume never sends it again.
    clock.advance(31)
    assert new_worker().resume("wf-1").status is RunStatus.NEEDS_REVIEW
    assert len(services.journal.requests("mailer")) == 1


def test_a_live_lease_keeps_a_second_worker_out(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.LEASE_ACQUIRED)).run("publish", "wf-1", POST)
    clock.advance(10)
    with pytest.raises(LeaseHeldError):
        new_worker().resume("wf-1")
    clock.advance(21)
    assert new_worker().resume("wf-1").status is RunStatus.COMPLETED


def test_a_paused_worker_whose_lease_was_taken_over_cannot_write(
    new_worker: NewWorker, services: InProcessServices, store: Store, clock: FakeClock
) -> None:
    """The slow worker of seed 001: paused past its lease, it wakes up fenced off."""
    new_worker().run("pay", "wf-1", ORDER)
    new_worker().grant("wf-1", "pay", "alice", ttl_s=3600)
    successor: list[Any] = []

    def pause(boundary: str, step: str | None = None) -> None:
        if boundary == b.STARTED_COMMITTED and not successor:
            clock.advance(31)
            successor.append(new_worker().resume("wf-1"))

    with pytest.raises(StaleFenceError):
        new_worker(hook=pause).resume("wf-1")

    assert successor[0].status is RunStatus.COMPLETED
    assert len(services.journal.applied_effects("payments")) == 1
    assert sequences(store, "wf-1") == list(range(1, len(store.checkpoints("wf-1")) + 1))


def test_an_expired_approval_sends_the_run_back_to_its_gate(
    new_worker: NewWorker, services: InProcessServices, store: Store, clock: FakeClock
) -> None:
    waiting = new_worker().run("pay", "wf-1", ORDER)
    assert (waiting.status, waiting.state) == (RunStatus.WAITING_APPROVAL, "start")
    new_worker().grant("wf-1", "pay", "alice", ttl_s=60)
    with pytest.raises(Killed):  # approved, then the worker dies before the charge
        new_worker(hook=kill_at(clock, b.CHECKPOINT_COMMITTED, "approve")).resume("wf-1")
    assert store.workflow("wf-1").state == "approved"
    expired_at = clock.now()
    clock.advance(61)

    outcome = new_worker().resume("wf-1")

    assert (outcome.status, outcome.state) == (RunStatus.WAITING_APPROVAL, "start")
    assert services.journal.requests("payments") == []
    assert store.effects("wf-1") == []
    [approval] = store.approvals("wf-1")
    assert approval.status == "requested" and approval.requested_at > expired_at
    states = [c.state for c in store.checkpoints("wf-1")]
    assert states[-2:] == ["start", "start"]  # back to the gate, then waiting at it

    new_worker().grant("wf-1", "pay", "bob", ttl_s=60)
    assert new_worker().resume("wf-1").status is RunStatus.COMPLETED
    assert [r.time for r in services.journal.requests("payments")]  # only now
    assert len(services.journal.applied_effects("payments")) == 1


def test_a_waiting_run_without_an_answer_does_nothing_on_resume(
    new_worker: NewWorker, store: Store
) -> None:
    new_worker().run("pay", "wf-1", ORDER)
    before = sequences(store, "wf-1")
    assert new_worker().resume("wf-1").status is RunStatus.WAITING_APPROVAL
    assert sequences(store, "wf-1") == before


def test_a_definite_rejection_fails_the_step_instead_of_retrying(
    new_worker: NewWorker, services: InProcessServices, store: Store
) -> None:
    outcome = new_worker().run("publish", "wf-1", {"slug": "", "title": "empty slug"})
    assert outcome.status is RunStatus.FAILED
    assert "create_post rejected" in outcome.reason
    [effect] = store.effects("wf-1")
    assert effect.status == "failed"
    assert len(services.journal.requests("cms")) == 1
