"""Named places where a worker may die, and the hook the engine calls at each.

The engine knows nothing about kill-switches: it calls `hook(boundary, step)` and carries on.
Whoever built the engine decides what a hook does: record the hit, raise an injected death,
`SIGKILL` the process, or pause this worker so another can run. The list below is documentation
and a set of constants, not the source of truth for campaigns: those discover boundaries by
recording a run, so a boundary added tomorrow is crashed tomorrow.
"""

from __future__ import annotations

from typing import Protocol


class BoundaryHook(Protocol):
    """`hook(boundary, step)`: the engine is at `boundary` (a name of its own choosing, such as
    `checkpoint.committed`) inside `step`. In a campaign the call may not return: the harness
    kills the worker there, or pauses it while another worker runs. Call it around each durable
    write and each call to a service; the harness also sees every request at the transport."""

    def __call__(self, boundary: str, step: str | None = None) -> None: ...


def no_hook(boundary: str, step: str | None = None) -> None:
    """The production hook: nothing happens at a boundary."""


LEASE_ACQUIRED = "lease.acquired"
STEP_BEGIN = "step.begin"
INTENT_BUILT = "effect.intent_built"
INTENT_COMMITTED = "effect.prepared"
STARTED_COMMITTED = "effect.started"
RESPONSE_RECEIVED = "transport.response_received"  # service committed, response not yet read
READ_RETURNED = "transport.read_returned"  # a read answered: what a write may be decided on
RESPONSE_READ = "effect.response_read"
RECEIPT_COMMITTED = "effect.receipt_committed"
VERIFY_READ = "verify.read_done"
CHECKPOINT_BUILT = "checkpoint.built"
CHECKPOINT_COMMITTED = "checkpoint.committed"
ARTIFACT_UPLOADED = "artifact.uploaded"
ARTIFACT_RECORDED = "artifact.recorded"
APPROVAL_REQUESTED = "approval.requested"
RECONCILE_LOOKED_UP = "reconcile.looked_up"
RECONCILE_RESOLVED = "reconcile.resolved"
COMPENSATE_RECORDED = "compensate.recorded"
HANDOFF_SENT = "handoff.sent"
HANDOFF_ACCEPTED = "handoff.accepted"
# an engine in another process has stored its start message (`harness.engines.command`): until
# it says so, or ends with a status, the message is handed to the next worker again
START_TAKEN = "start.taken"
