"""Mutants that lose track of time, written from seed 000's "Budgets and stop conditions — Carry
token, time, cost, retry, and step limits into the resumed run. — Restarting resets safety
limits and enables an unbounded loop" and "Letting restarts reset limits — Attempts, cost,
time, and safety budgets belong to durable state".

Each keeps the attempts, steps and cost it is told to and gets time wrong in one way: a worker
that counts the time left from the moment it picks the run up (the time the run spent down is
never charged, so a run down for two days still has its day), and a migration that reads an
old checkpoint's limits as the budget left (v1 kept the limits and what was spent apart).
"""

from __future__ import annotations

from killpoint.reference.checkpoint import Checkpoint, StoredCheckpoint, parse_sealed
from killpoint.reference.dispatcher import Engine
from killpoint.reference.ledger import Session


class TimeLeftCountedFromResume(Engine):
    """000: restarting resets safety limits — the time budget restarted on every resume."""

    def budget_at_resume(self, session: Session, cp: Checkpoint) -> Checkpoint:
        """The time left at the checkpoint, counted from now: a worker's timer starts when it
        picks the run up, as a request timeout would."""
        return cp.model_copy(update={"created_at": self.clock.now()})


# a v1 checkpoint's limit fields, and the budget field each was taken for
V1_LIMITS = (
    ("attempts", "attempts_left"),
    ("steps", "steps_left"),
    ("cost", "cost_left"),
    ("time_ms", "time_left_ms"),
)


class LegacyLimitsTakenAsLeft(Engine):
    """000: an old schema migrated field by field by name — v1's limits taken as the budget
    left, what v1 had spent dropped."""

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        """As the reference (seal, tenant, schema checked, migrated), then a v1 checkpoint's
        budget is its `limits`, as the field names suggest."""
        cp = super().open(stored, key)
        doc = parse_sealed(stored.body)
        limits = doc.get("limits")
        if doc.get("schema_version") != 1 or not isinstance(limits, dict):
            return cp
        left = {field: limits[name] for name, field in V1_LIMITS}
        return cp.model_copy(update={"budget": cp.budget.model_copy(update=left)})
