"""The approval: a person's grant at a gate, what keeps it valid, and when a run goes back.

An approval step asks once (a request row: the gate, its scope `workflow:gate`, the policy
version and what is approved) and stops the run `waiting_approval`; a person grants it, naming
themself and an expiry (`Store.grant_approval`). The next checkpoint pins the grant
(`ApprovalGrant`), and before each protected step and right before its send the grant is read
again from the store: an expired or absent one sends the run back to its gate (`BackToGate`).
A grant is never trusted because it was once seen.
"""

from __future__ import annotations

from collections.abc import Iterable

from killpoint.contract.records import ApprovalRecord
from killpoint.reference.checkpoint import ApprovalGrant


class BackToGate(Exception):
    """A protected step found no valid approval: the run goes back to the gate's state."""

    def __init__(self, gate: str, reason: str) -> None:
        super().__init__(reason)
        self.gate = gate
        self.reason = reason


def grant_scope(workflow_name: str, gate: str) -> str:
    """What a request approves: this gate of this workflow, not a gate of that name anywhere."""
    return f"{workflow_name}:{gate}"


def valid_grant(records: Iterable[ApprovalRecord], gate: str, now: float) -> ApprovalRecord | None:
    """The gate's record if it is granted and not yet expired at `now`."""
    record = next((a for a in records if a.gate == gate), None)
    if record is None or record.status != "granted" or (record.expires_at or 0) <= now:
        return None
    return record


def pinned(record: ApprovalRecord) -> ApprovalGrant:
    """A granted record as the checkpoint pins it: who granted what, under which policy, until."""
    assert record.actor is not None and record.expires_at is not None
    return ApprovalGrant(
        gate=record.gate,
        actor=record.actor,
        scope=record.scope,
        policy_version=record.policy_version,
        expires_at=record.expires_at,
    )


def require_valid_grant(records: Iterable[ApprovalRecord], gate: str, now: float) -> None:
    """Back to the gate unless a grant for it is valid at `now` (on resume and before a send)."""
    for grant in records:
        if grant.gate == gate and grant.status == "granted":
            if grant.expires_at is not None and grant.expires_at > now:
                return
            raise BackToGate(gate, f"approval {gate!r} expired at {grant.expires_at}")
    raise BackToGate(gate, f"no valid approval {gate!r}")
