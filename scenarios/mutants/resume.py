"""Mutants of a resume: an `Engine` with one of the steps of seed 000's resume order broken
(open the checkpoint, load its outputs, take the lease, read the budget, start or redeliver)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract.records import BudgetLimits
from killpoint.harness.engines.reference import ReferenceEngine
from killpoint.harness.protocol import WorkerEnv
from killpoint.harness.scenario import Scenario
from killpoint.reference.budget import initial_budget
from killpoint.reference.checkpoint import Checkpoint, StoredCheckpoint, parse_sealed, upgrade
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import QuarantinedError
from killpoint.reference.fold import Change
from killpoint.reference.lease import Lease
from killpoint.reference.ledger import Session


class BudgetsResetOnRestart(Engine):
    """000: letting restarts reset limits."""

    limits = BudgetLimits()  # the scenario's, set by `WithScenarioLimits`

    def budget_at_resume(self, session: Session, cp: Checkpoint) -> Checkpoint:
        """The budget is set back to the limits every time a worker picks the run up."""
        budget = initial_budget(self.limits)
        session.attempts_left = budget.attempts_left
        return cp.model_copy(update={"budget": budget})


class WithScenarioLimits(ReferenceEngine):
    """Workers that know their scenario's limits: what a budget reset resets to."""

    def build(self, env: WorkerEnv, scenario: Scenario) -> Engine:
        engine = super().build(env, scenario)
        assert isinstance(engine, BudgetsResetOnRestart)
        engine.limits = scenario.limits
        return engine


class CheckpointTrustedUnchecked(Engine):
    """000: a checkpoint trusted without its integrity check."""

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        """Deserialize whatever the store holds: no tag, no tenant check."""
        return Checkpoint.model_validate(upgrade(parse_sealed(stored.body)))

    def load_outputs(self, cp: Checkpoint) -> dict[str, JsonValue]:
        """Nor of the output rows against the checkpoint's chain."""
        rows = self.store.outputs(cp.workflow_id, cp.outputs_ref.since)
        return {**cp.outputs, **{r.step: json.loads(r.value) for r in rows}}


class OldSchemaDefaulted(Engine):
    """000: ignoring version drift — an old schema defaulted silently."""

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        """A legacy checkpoint missing a safety field is migrated with invented defaults."""
        try:
            return super().open(stored, key)
        except QuarantinedError:
            doc = parse_sealed(stored.body)
            doc["owner_tenant"] = doc.get("owner_tenant") or self.settings.tenant
            limits = BudgetLimits()
            doc["limits"] = doc.get("limits") or {
                "attempts": limits.attempts,
                "steps": limits.steps,
                "cost": limits.cost,
                "time_ms": int(limits.time_s * 1000),
            }
            return Checkpoint.model_validate(upgrade(doc))


class RedeliveryIsFreshWork(Engine):
    """000: assuming the queue is the database — redelivery is fresh work."""

    def start(
        self,
        workflow_name: str,
        workflow_id: str,
        input: Mapping[str, JsonValue],
        limits: BudgetLimits | None = None,
    ) -> bool:
        """A redelivered start message starts the workflow over from its first state."""
        if super().start(workflow_name, workflow_id, input, limits):
            return True
        key = self.settings.secret.resolve()
        stored = self.store.latest_checkpoint(workflow_id)
        assert stored is not None
        cp = self.open(stored, key)
        wf = self.workflow(cp.workflow_name)
        lease = self.acquire(workflow_id)
        session = Session(self.store, lease, self.clock, self.hook, cp.budget.attempts_left)
        self.commit(session, wf, cp, Change(wf.initial, reset=True), None, key)
        return True


class LeaseWithoutFencing(Engine):
    """001: a lease without a fencing token (with the store's `Unfenced` fence)."""

    def acquire(self, workflow_id: str) -> Lease:
        """Once taken, the lease is never checked again, by the store or before a send."""
        lease = super().acquire(workflow_id)
        return Lease(lease.workflow_id, lease.owner, lease.token, math.inf)
