"""Mutants of the operator's tools: the "force complete" seed 000 warns against, and a retry
that is not "retry with the same key".

Seed 000: "Manual controls should be narrow … 'Force complete' is usually too dangerous." The
first engine's reconcile does not ask the service: it marks the run complete, whatever its
ledger says, so a run whose irreversible effect is in doubt ends `completed` with no receipt
and no verification read. The named case `operator_reconcile_after_lost_mail` reaches it.

Seed 000 again: "reconcile, retry with the same key, compensate …", and among the common
mistakes "Generating a fresh idempotency key on resume: the key identifies the logical
operation, not the network attempt." The second engine's workers keep their keys; its operator's
retry does not: a person's retry is taken for a new attempt, sent under a key of its own. The
ledger still names the old key. Where the first attempt reached the service, the service sees a
new request and applies it again.
"""

from __future__ import annotations

from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.records import EffectIntent, Receipt, RunStatus
from killpoint.harness.engines.reference import ReferenceEngine
from killpoint.reference.control_rules import CLOSED, Facts
from killpoint.reference.controls import ControlRefused, Controls, Held
from killpoint.reference.fold import Change
from killpoint.scenarios.mutants.wrapped import Wrapped


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


class _Minted(Wrapped):
    """A service seen through a retry that sends under a key minted for the attempt."""

    def __init__(self, adapter: EffectAdapter, stamp: str) -> None:
        super().__init__(adapter)
        self.stamp = stamp

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        return self.adapter.send(intent, f"{key}-{self.stamp}")


class FreshKeyRetry(Controls):
    """Retries each effect in doubt as a new attempt, under a new key."""

    def resent(self, held: Held) -> Change:
        steps = self.engine.steps
        kept, stamp = steps.adapters, f"retry-{held.checkpoint.sequence}"
        steps.adapters = {name: _Minted(a, stamp) for name, a in kept.items()}
        try:
            return super().resent(held)
        finally:
            steps.adapters = kept


class FreshKeyRetryWorkers(ReferenceEngine):
    controls_class = FreshKeyRetry
