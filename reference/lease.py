"""The lease: a worker's hold on a workflow, how it is acquired and renewed, and its fence.

A worker acquires a workflow's lease (`acquire`) if it is free, expired or already its own, and
always with a larger fencing token than any holder before it: a worker that stalled past its
expiry and comes back (a paused VM, a long GC) still carries its old token. It renews the lease
before it runs out (`renew`) and lets go when it stops (`release`); both are fenced writes, so a
lapsed or stolen lease is refused like any other.

The fence is what every write of a worker passes first, in the write's own transaction. A write
first moves the workflow row with a guarded `UPDATE … WHERE fencing_token = :mine AND lease
unexpired [AND sequence = :seen]`. If the guard matches no row, the transaction rolls back and
the caller learns why (stale fencing token, expired lease, lost compare-and-swap). The store
rejects the stale write itself; no engine code has to remember to check.

The fence's checks are public methods so that a broken engine can drop one of them and nothing
else: `guard` (the lease, for every write), `compare_and_swap` (what a checkpoint commit asks),
and `move` (the UPDATE itself, with or without the lease's conditions). The store owns the
transactions: `Store.acquire_lease`, `renew_lease` and `release_lease` run these in one each.
"""

from __future__ import annotations

from dataclasses import dataclass

from killpoint.reference import _statements as q
from killpoint.reference._sql import Tx
from killpoint.reference.checkpoint import NewCheckpoint
from killpoint.reference.errors import (
    ConflictError,
    LeaseHeldError,
    StaleFenceError,
    UnknownWorkflowError,
)
from killpoint.reference.rows import Row, workflow_position

__all__ = ["Fence", "Lease", "Tx", "acquire", "release", "renew"]


@dataclass(frozen=True)
class Lease:
    """A worker's hold on a workflow: the fencing token every one of its writes carries."""

    workflow_id: str
    owner: str
    token: int
    expires_at: float


def acquire(tx: Tx, workflow_id: str, owner: str, ttl: float, now: float) -> Lease:
    """Take ownership if free, expired or already ours; always with a larger fencing token."""
    params = {"workflow_id": workflow_id, "owner": owner, "now": now, "expires_at": now + ttl}
    moved = tx.write(q.ACQUIRE_LEASE, params)
    row = tx.execute(q.LEASE_ROW, {"workflow_id": workflow_id}).first()
    if row is None:
        raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
    if not moved:
        raise LeaseHeldError(
            f"workflow {workflow_id!r} is leased to {row['lease_owner']} "
            f"until {row['lease_expires_at']:.3f}"
        )
    return Lease(workflow_id, owner, int(row["fencing_token"]), now + ttl)


def renew(tx: Tx, fence: Fence, lease: Lease, now: float, ttl: float) -> Lease:
    """Extend a lease we still hold; a lapsed or stolen one is refused like any write."""
    fence.guard(tx, lease, now, extend_to=now + ttl)
    return Lease(lease.workflow_id, lease.owner, lease.token, now + ttl)


def release(tx: Tx, fence: Fence, lease: Lease, now: float) -> None:
    """Let go of a lease we still hold: the fenced move itself clears it, in one statement."""
    fence.guard(tx, lease, now, {"lease_owner": None, "lease_expires_at": None})


class Fence:
    """Guards each write of a worker by its lease, and each checkpoint by its sequence."""

    def guard(
        self,
        tx: Tx,
        lease: Lease,
        now: float,
        values: Row | None = None,
        *,
        expect_sequence: int | None = None,
        extend_to: float | None = None,
        spend_attempt: bool = False,
    ) -> None:
        """Move the workflow row (`values`, by column) only if our token, lease [and the
        sequence we read] still hold; otherwise raise why not."""
        moved = self.move(
            tx,
            lease,
            now,
            {} if values is None else values,
            expect_sequence=expect_sequence,
            extend_to=extend_to,
            spend_attempt=spend_attempt,
        )
        if moved != 1:
            raise self.refusal(tx, lease, now, expect_sequence)

    def compare_and_swap(
        self, tx: Tx, lease: Lease, now: float, cp: NewCheckpoint, *, extend_to: float | None
    ) -> None:
        """A checkpoint's guard: from sequence n-1 to n under our lease, or not at all."""
        self.guard(
            tx,
            lease,
            now,
            workflow_position(cp),
            expect_sequence=cp.sequence - 1,
            extend_to=extend_to,
        )

    def move(
        self,
        tx: Tx,
        lease: Lease,
        now: float,
        values: Row,
        *,
        fenced: bool = True,
        expect_sequence: int | None = None,
        extend_to: float | None = None,
        spend_attempt: bool = False,
    ) -> int:
        """The UPDATE of the workflow row: `fenced`, under our token and unexpired lease;
        `expect_sequence`, from that sequence only. How many rows it moved (0 or 1)."""
        if extend_to is not None:
            values["lease_expires_at"] = extend_to
        values["updated_at"] = now
        shape = q.guarded_update(
            fenced, expect_sequence is not None, tuple(sorted(values)), spend_attempt
        )
        values.update(  # the parameters: each value by its column's name, and the guard's
            g_workflow_id=lease.workflow_id,
            g_token=lease.token,
            g_owner=lease.owner,
            g_now=now,
            g_sequence=expect_sequence,
        )
        return tx.write(shape, values)

    def refusal(self, tx: Tx, lease: Lease, now: float, expect_sequence: int | None) -> Exception:
        """Why a guarded move matched no row, read in the same transaction."""
        row = tx.execute(q.LEASE_ROW, {"workflow_id": lease.workflow_id}).first()
        if row is None:
            return UnknownWorkflowError(f"no workflow {lease.workflow_id!r}")
        if row["fencing_token"] != lease.token or row["lease_owner"] != lease.owner:
            return StaleFenceError(
                f"fencing token {lease.token} of {lease.owner} is stale: the workflow is at "
                f"token {row['fencing_token']} held by {row['lease_owner']}"
            )
        expires = row["lease_expires_at"]
        if expires is None or expires <= now:
            return StaleFenceError(f"lease of {lease.owner} expired at {expires}")
        return ConflictError(
            f"compare-and-swap lost: expected sequence {expect_sequence}, the workflow is at "
            f"{row['sequence']}"
        )
