"""The dead-letter path and the compensate control, on both backends."""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.fake_services import InProcessServices
from killpoint.harness.run.killswitch import Killed
from killpoint.reference import ControlRefused, Controls, Engine, Settings, audit_trail
from killpoint.reference.deadletter import deliveries
from killpoint.reference.operator_queue import APPROVAL_AFTER_S, operator_queue
from killpoint.reference.store import Store
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.order_saga import SCENARIO as ORDER
from tests.support.fixtures import TEST_KEY, NewWorker, OpenStore
from tests.support.flows import VERSIONS, kill_at

INPUT = {"slug": "s", "title": "t"}


def crash_again(new_worker: NewWorker, clock: FakeClock, times: int, limit: int) -> RunStatus:
    """Deliver wf-1 `times` times, each worker dying before its post; the last status seen."""
    status = RunStatus.RUNNING
    for _ in range(times):
        worker = new_worker(hook=kill_at(clock, b.STEP_BEGIN, "create_post"), max_deliveries=limit)
        with contextlib.suppress(Killed):
            worker.start("publish", "wf-1", INPUT)
            status = worker.resume("wf-1").status
        clock.advance(31.0)
    return status


def test_a_run_redelivered_past_the_limit_is_dead_lettered_with_its_evidence(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    assert crash_again(new_worker, clock, 3, limit=3) is RunStatus.RUNNING  # died each time

    outcome = new_worker(max_deliveries=3).resume("wf-1")

    assert outcome.status is RunStatus.DEAD_LETTERED
    assert outcome.reason.startswith("dead-lettered: delivered 4 times without ending")
    assert "the limit is 3" in outcome.reason and "'drafted'" in outcome.reason
    assert store.workflow("wf-1").lease_owner is None
    assert services.journal.applied_effects("cms") == []


def test_a_dead_lettered_run_refuses_every_redelivery_until_a_person_acts(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    crash_again(new_worker, clock, 3, limit=2)
    sequence = store.workflow("wf-1").sequence
    for _ in range(3):  # redelivered: a stop for review each time, nothing written
        worker = new_worker(max_deliveries=2)
        assert worker.start("publish", "wf-1", INPUT) is False
        assert worker.resume("wf-1").status is RunStatus.DEAD_LETTERED
    assert store.workflow("wf-1").sequence == sequence

    Controls(new_worker(), "bob").branch("wf-1", "the CMS is back")

    assert deliveries(store, "wf-1") == 0  # the control started the count over
    assert new_worker(max_deliveries=2).resume("wf-1").status is RunStatus.COMPLETED


def test_no_limit_never_dead_letters(new_worker: NewWorker, clock: FakeClock) -> None:
    crash_again(new_worker, clock, 4, limit=None)  # type: ignore[arg-type]
    assert new_worker(max_deliveries=None).resume("wf-1").status is RunStatus.COMPLETED


def order_worker(
    open_store: OpenStore, clock: FakeClock, http: httpx.Client, root: Path, **hook: object
) -> Engine:
    return Engine(
        open_store(),
        [ORDER.workflow],
        adapters_for(http),
        artifacts=FolderArtifacts(root / "artifacts"),
        clock=clock,
        versions=VERSIONS,
        settings=Settings(),
        **hook,  # type: ignore[arg-type]
    )


def test_compensate_undoes_a_committed_charge_through_the_compensating_step(
    open_store: OpenStore,
    store: Store,
    clock: FakeClock,
    http: httpx.Client,
    tmp_path: Path,
    services: InProcessServices,
    checkpoint_key: bytes,
) -> None:
    dying = order_worker(
        open_store, clock, http, tmp_path, hook=kill_at(clock, b.STEP_BEGIN, "ship")
    )
    with contextlib.suppress(Killed):
        dying.run(ORDER.workflow.name, "wf-1", ORDER.make_input("r1"))
    clock.advance(31.0)

    outcome = Controls(order_worker(open_store, clock, http, tmp_path), "bob").compensate(
        "wf-1", "the warehouse burnt down"
    )

    assert (outcome.status, outcome.state) == (RunStatus.RUNNING, "shipment_rejected")
    final = order_worker(open_store, clock, http, tmp_path).resume("wf-1")
    assert final.status is RunStatus.COMPENSATED
    assert len(services.journal.applied_effects("payments")) == 2  # the charge and its refund
    assert [a.control for a in audit_trail(store, "wf-1")] == ["compensate"]


def test_compensate_is_refused_where_the_workflow_has_no_compensating_step(
    new_worker: NewWorker, clock: FakeClock
) -> None:
    crash_again(new_worker, clock, 1, limit=20)
    with pytest.raises(ControlRefused, match="has no compensating step"):
        Controls(new_worker(), "bob").compensate("wf-1", "undo")


def test_the_queue_lists_a_dead_letter_and_an_approval_left_waiting_too_long(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    crash_again(new_worker, clock, 3, limit=2)
    worker = new_worker()
    worker.start("pay", "wf-pay", {"order_id": "o-1"})
    assert worker.resume("wf-pay").status is RunStatus.WAITING_APPROVAL
    asked = clock.now()

    def queue(at: float) -> list[tuple[str, str, tuple[str, ...]]]:
        entries = operator_queue(
            store,
            tenant="default",
            now=at,
            key=TEST_KEY.encode(),
            services=worker.steps.adapters,
            workflows=worker.workflows,
        )
        return [(e.workflow_id, e.reason, e.controls) for e in entries]

    assert queue(asked + 60) == [
        ("wf-1", "dead_lettered", ("branch", "terminate")),
    ]
    assert queue(asked + APPROVAL_AFTER_S + 1) == [
        ("wf-1", "dead_lettered", ("branch", "terminate")),
        ("wf-pay", "waiting_approval", ("request-approval", "branch", "terminate")),
    ]
    assert operator_queue(store, tenant="tenant-b", now=asked, key=TEST_KEY.encode()) == []
