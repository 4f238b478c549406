"""A run's history, assembled once its workers have ended: what the harness observed (hits,
workers, grants, lies, neighbours) beside what the engine's durable records and the services'
journals hold, read afresh in the campaign's process (`History` says what each field is)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from killpoint.harness.history import History
from killpoint.harness.run.durable import read_records, run_ending
from killpoint.harness.run.neighbours import neighbour_records, own_records
from killpoint.harness.run.redelivery import lie_records

if TYPE_CHECKING:
    from killpoint.harness.run.runner import Run


def history_of(run: Run) -> History:
    """The run's history, its canary scan included (`harness.canaries`)."""
    reader, readable = read_records(run)
    own = own_records(run, run.world.services.journal)
    workflow_id = run.workflow_id
    history = History(
        scenario=run.scenario.name,
        workflow_id=workflow_id,
        schedule=run.schedule,
        limits=run.scenario.limits,
        expected=own.expected,
        hits=run.hits,
        workers=sorted(run.workers, key=lambda w: w.worker),
        tampered=run.tampered,
        failures=run.failures,
        grants=run.grants,
        controls=run.controls,
        checkpoints=reader.checkpoints(workflow_id),
        readable=readable,
        compacted_below=reader.compacted_below(workflow_id),
        effects=reader.effects(workflow_id),
        ledger=readable and getattr(reader, "ledger", True),
        lacks=sorted(run.engine.lacks),
        approvals=reader.approvals(workflow_id),
        requests=own.requests,
        applied=own.applied,
        expected_status=run.scenario.expected_status.value,
        lies=lie_records(run),
        origin=run.origin,
        neighbours=neighbour_records(run),
        **run_ending(run, reader, readable),
    )
    return run.world.canaries.scanned(run.world.store, run.world.workdir, history)
