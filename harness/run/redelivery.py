"""Delivering the schedule's lying start messages to workers, and recording what they said.

A lie goes to a worker of the run before its resume, as the engine's `start` with the lying
content (`harness.lies` says what each kind says); another tenant's claim goes to a worker of
that tenant instead, built on the same store with a `StoreHandle` of its own tenant. An engine
may refuse a lie by raising: that is as good as ignoring it. The history keeps each lie that
reached a worker (`LieRecord`), with the requests the services had seen before it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import httpx

from killpoint.contract.boundaries import no_hook
from killpoint.harness.history import LieRecord
from killpoint.harness.lies import LIAR_TENANT, Message, lying_message
from killpoint.harness.protocol import SHARED_PROCESS, EngineUnderTest, WorkerEnv
from killpoint.harness.run.db_loss import database_fault

if TYPE_CHECKING:
    from killpoint.harness.run.runner import Run


def deliver(run: Run, engine: EngineUnderTest, worker: int) -> None:
    """The lies the schedule gives worker `worker`, before its resume: each one the engine's
    start, by this worker (or, for another tenant's claim, by a worker of that tenant)."""
    for lie in run.schedule.lies:
        if lie.worker != worker:
            continue
        message = lying_message(run.scenario, run.schedule.run_id, run.input, lie.kind)
        if message.tenant is None:
            _offered(
                functools.partial(engine.start, run.scenario, run.workflow_id, message.content)
            )
        elif SHARED_PROCESS not in run.engine.lacks:
            _claimed(run, worker, message)


def _offered(start: Callable[[], object]) -> None:
    """Offer a lying message; refusing it by raising is as good as ignoring it. A death (the
    kill-switch's, or the database's) is not a refusal: it ends the worker as it would."""
    try:
        start()
    except Exception as exc:
        if database_fault(exc) is not None:
            raise


def _claimed(run: Run, worker: int, message: Message) -> None:
    """Another tenant's worker takes the message: its engine's start, on the same store, with
    a store handle of that tenant. It reports no boundary (it is no worker of the run) and
    sends nothing; what a worker of another tenant may then do is the shared world's to try."""
    world = run.world
    store = dataclasses.replace(world.store, tenant=message.tenant or LIAR_TENANT)
    transport = world.services.transport()
    with httpx.Client(base_url=world.services.base_url, transport=transport) as http:
        env = WorkerEnv(
            owner=f"{store.tenant}-worker-{worker}",
            store=store,
            http=http,
            hook=no_hook,
            clock=world.clock,
            versions=run.versions_for(worker),
            lease_ttl=world.lease_ttl,
        )

        def start() -> object:
            liar = run.engine.factory(env, run.scenario)
            return liar.start(run.scenario, run.workflow_id, message.content)

        _offered(start)


def lie_records(run: Run) -> list[LieRecord]:
    """The lies delivered in a run, for its history: each to a worker that ran, after the
    requests the workers before it had made."""
    ran = {w.worker: w for w in run.workers}
    records = []
    for lie in run.schedule.lies:
        got = ran.get(lie.worker)
        if got is None:  # the run ended before that worker: nothing was delivered
            continue
        message = lying_message(run.scenario, run.schedule.run_id, run.input, lie.kind)
        seen = [
            w.journal_seq_end
            for w in run.workers
            if w.worker < lie.worker and w.ended_at <= got.started_at
        ]
        records.append(
            LieRecord(
                worker=lie.worker,
                kind=lie.kind,
                tenant=message.tenant or run.world.store.tenant,
                content=message.content,
                marks=list(message.marks),
                journal_seq=max(seen, default=0),
                delivered=message.tenant is None or SHARED_PROCESS not in run.engine.lacks,
            )
        )
    return records
