"""Mutants of the store: a `Fence` that drops a check, a `CheckpointLog` that writes over.

The store applies them to its own database (`Store.using`), so the reference's tables and
statements serve the mutant unchanged."""

from __future__ import annotations

from typing import Any

from killpoint.reference.checkpoint import NewCheckpoint
from killpoint.reference.errors import ConflictError
from killpoint.reference.lease import Fence, Lease, Tx
from killpoint.reference.rows import workflow_position
from killpoint.reference.store import CheckpointLog


class LastWriterWins(Fence):
    """000: no compare-and-swap — the last writer wins."""

    def compare_and_swap(
        self, tx: Tx, lease: Lease, now: float, cp: NewCheckpoint, *, extend_to: float | None
    ) -> None:
        """A commit moves the workflow row whatever it holds, under any lease or none."""
        self.move(tx, lease, now, workflow_position(cp), fenced=False)


class WrittenOver(CheckpointLog):
    """The log of a store without compare-and-swap: nothing keeps a sequence to one writer."""

    def append(self, tx: Tx, lease: Lease, now: float, cp: NewCheckpoint) -> None:
        """A checkpoint takes its sequence's place, whoever wrote there first."""
        self.erase(tx, lease.workflow_id, cp.sequence)
        super().append(tx, lease, now, cp)


class Unfenced(Fence):
    """001: a lease without a fencing token."""

    def guard(
        self,
        tx: Tx,
        lease: Lease,
        now: float,
        values: dict[str, Any] | None = None,
        *,
        expect_sequence: int | None = None,
        extend_to: float | None = None,
        spend_attempt: bool = False,
    ) -> None:
        """Writes carry no fencing token: only the compare-and-swap on the sequence is left."""
        moved = self.move(
            tx,
            lease,
            now,
            values or {},
            fenced=False,
            expect_sequence=expect_sequence,
            extend_to=extend_to,
            spend_attempt=spend_attempt,
        )
        if moved != 1:
            raise ConflictError(f"compare-and-swap lost: expected sequence {expect_sequence}")


class NoRowUpdatedIsAnError(Fence):
    """001: a lost compare-and-swap read as the database's "no row updated", not as a lost lease.

    The guarded UPDATE matches nothing because another worker holds the lease now; the engine
    checks the row count the way a data layer does and raises, so the worker that should step
    down dies with an error of its own instead (and with it whatever else its process ran)."""

    def refusal(self, tx: Tx, lease: Lease, now: float, expect_sequence: int | None) -> Exception:
        return RuntimeError(f"UPDATE workflows matched 0 rows for {lease.workflow_id!r}")
