"""A mutant of the operator's tools: the "force complete" seed 000 warns against.

Seed 000: "Manual controls should be narrow … 'Force complete' is usually too dangerous." This
engine's reconcile does not ask the service: it marks the run complete, whatever its ledger
says, so a run whose irreversible effect is in doubt ends `completed` with no receipt and no
verification read. The named case `operator_reconcile_after_lost_mail` reaches it.
"""

from __future__ import annotations

from killpoint.harness.contract.records import RunStatus
from killpoint.harness.engine.control_rules import CLOSED, Facts
from killpoint.harness.engine.controls import ControlRefused, Controls, Held
from killpoint.harness.engine.fold import Change
from killpoint.harness.engines.reference import ReferenceEngine


class ForceComplete(Controls):
    """Refuses only a closed run, and "reconciles" by declaring the run done."""

    def check(self, control: str, workflow_id: str, facts: Facts) -> None:
        if facts.status in CLOSED:
            raise ControlRefused(f"{control}: the run is {facts.status.value}")

    def reconciled(self, held: Held) -> Change:
        done = [s for s, status in held.workflow.terminal.items() if status is RunStatus.COMPLETED]
        return Change(done[0], RunStatus.COMPLETED, "force-completed by the operator")


class ForceCompleteWorkers(ReferenceEngine):
    controls_class = ForceComplete
