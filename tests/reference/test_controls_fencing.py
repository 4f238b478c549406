"""A control is fenced like any worker: against a live worker exactly one of them writes, on
both backends."""

from __future__ import annotations

import contextlib

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import EffectStatus, RunStatus
from killpoint.fake_services import InProcessServices
from killpoint.harness.run.killswitch import Killed
from killpoint.reference import Controls, audit_trail
from killpoint.reference.errors import LeaseHeldError, StaleFenceError
from killpoint.reference.operator_view import build_view
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import kill_at

INPUT = {"slug": "s", "title": "t"}


def test_a_live_worker_s_lease_refuses_the_control_and_nothing_is_written(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    with contextlib.suppress(Killed):  # died a moment ago: its lease is still live
        new_worker(hook=kill_at(clock, b.STARTED_COMMITTED, "create_post")).run(
            "publish", "wf-1", INPUT
        )
    before = store.workflow("wf-1")
    view = build_view(store, "wf-1", key=TEST_KEY.encode(), now=clock.now(), tenant="default")
    assert view.controls == () and all(
        why.startswith("a live lease is held by") for why in view.refused_controls.values()
    )

    with pytest.raises(LeaseHeldError, match="a live lease is held by"):
        Controls(new_worker(), "bob").terminate("wf-1", "stuck?")

    after = store.workflow("wf-1")
    assert (after.sequence, after.fencing_token, after.status) == (
        before.sequence,
        before.fencing_token,
        before.status,
    )
    assert audit_trail(store, "wf-1") == []


def test_a_worker_racing_a_control_loses_cleanly_with_a_stale_fence(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    """The worker pauses past its lease just before it sends; an operator terminates the run
    meanwhile. The worker then refuses to send and writes nothing: only the control wrote."""
    terminated: list[RunStatus] = []

    def pause_then_operator(boundary: str, step: str | None = None) -> None:
        if boundary == b.STARTED_COMMITTED and step == "create_post" and not terminated:
            clock.advance(31.0)
            terminated.append(Controls(new_worker(), "bob").terminate("wf-1", "paused").status)

    with pytest.raises(StaleFenceError):
        new_worker(hook=pause_then_operator).run("publish", "wf-1", INPUT)

    assert terminated == [RunStatus.FAILED]
    assert services.journal.applied_effects("cms") == []  # the worker never sent
    assert store.workflow("wf-1").status is RunStatus.FAILED
    [cp] = [c for c in store.checkpoints("wf-1") if c.sequence == store.workflow("wf-1").sequence]
    [audit] = audit_trail(store, "wf-1")
    assert (audit.to_sequence, audit.fencing_token) == (cp.sequence, cp.fencing_token)
    assert new_worker().resume("wf-1").status is RunStatus.FAILED


def test_a_control_holding_the_lease_refuses_a_worker_then_hands_the_run_back(
    new_worker: NewWorker, store: Store, clock: FakeClock, services: InProcessServices
) -> None:
    """While the control reconciles, a redelivered worker is refused by the control's lease;
    once the control is done the next worker finishes the run: one post in all."""
    with contextlib.suppress(Killed):
        new_worker(hook=kill_at(clock, b.RESPONSE_READ, "create_post")).run(
            "publish", "wf-1", INPUT
        )
    clock.advance(31.0)
    refused: list[str] = []

    def worker_meanwhile(boundary: str, step: str | None = None) -> None:
        if boundary == b.RECONCILE_LOOKED_UP:
            with pytest.raises(LeaseHeldError) as caught:
                new_worker().resume("wf-1")
            refused.append(str(caught.value))

    outcome = Controls(new_worker(hook=worker_meanwhile), "bob").reconcile("wf-1", "died")

    assert refused and "operator:bob" in refused[0]
    assert outcome.status is RunStatus.RUNNING
    assert store.workflow("wf-1").lease_owner is None  # the control let go
    assert new_worker().resume("wf-1").status is RunStatus.COMPLETED
    assert len(services.journal.applied_effects("cms")) == 1
    [effect] = store.effects("wf-1")
    assert effect.status is EffectStatus.VERIFIED
