"""Mutants of the mistakes only a wider world exposes: deeper schedules (`campaign.explore`),
start messages that lie (`harness.lies`), neighbours (`run.neighbours`), the durable records
behind a worker's word and an operator's controls under faults, the world's secrets and time.
Each is registered in `MUTANTS` after the seeds' first ones, in this order.
"""

from __future__ import annotations

from killpoint.harness.protocol import EngineSpec
from killpoint.scenarios.mutants import (
    canary,
    controls,
    deadletter,
    deadline,
    explore,
    graceful,
    lies,
    stale,
    world,
)
from killpoint.scenarios.mutants.build import mutant

__all__ = ["WIDER"]

WIDER: dict[str, EngineSpec] = {}

# mistakes only deeper schedules expose (`campaign.explore`): crash after a 5xx, a fault on a
# lookup or a verification read, a start message redelivered after the run ended
WIDER.update(
    (s.name, s)
    for s in (
        mutant(
            "unrecorded_attempt_resent",
            "001: retries hidden from the ledger — an attempt killed before its outcome was "
            "recorded is sent again without spending another",
            executor=explore.UnrecordedAttemptResent,
        ),
        mutant(
            "lookup_timeout_taken_as_absent",
            "000: marking a timeout as a failure — a reconcile lookup that times out is taken "
            "for not found, and the effect is sent again",
            executor=explore.LookupTimeoutIsAbsence,
        ),
        mutant(
            "failed_read_taken_as_verified",
            "000: completion without verification — a verification read that failed counts "
            "as one that saw the effect",
            kinds=explore.FailedReadIsVerified,
        ),
        mutant(
            "finished_run_restarted_on_redelivery",
            "000: assuming the queue is the database — a start message for a finished run "
            "starts it over",
            engine=explore.FinishedRunRestarted,
        ),
    )
)

# lying start messages (`harness.lies`): a redelivery that differs from the original, taken at
# its word
WIDER.update(
    (s.name, s)
    for s in (
        mutant(
            "redelivered_start_replaces_input",
            "000: assuming the queue is the database — a start message redelivered for a run "
            "under way replaces its validated input",
            engine=lies.LatestMessageAmendsTheRun,
        ),
        mutant(
            "protected_call_beyond_its_approval",
            "000: approval and authorization state — a protected call built from the latest "
            "start message, never checked against what its approval covered",
            engine=lies.LatestMessageInHand,
            kinds=lies.ProtectedCallFromTheMessage,
        ),
    )
)

# mistakes only a neighbour exposes (`run.neighbours`): a second tenant with the same orders,
# another workflow at the same gate
WIDER.update(
    (s.name, s)
    for s in (
        mutant(
            "idempotency_key_without_workflow",
            "001: the idempotency key hashed from the business intent alone, without the "
            "workflow or tenant — two tenants' identical orders share one key",
            executor=world.KeyOfTheIntent,
        ),
        mutant(
            "approval_found_by_scope",
            "000: an approval found by its gate and scope, not checked to answer this run's "
            "request — another workflow's or tenant's grant opens the gate",
            kinds=world.ApprovalTakenByScope,
        ),
    )
)

# the end a worker returns is a message, not a record; an operator's retry keeps its key
WIDER.update(
    (s.name, s)
    for s in (
        mutant(
            "dead_letter_only_reported",
            "001: assuming the queue is the database — a run past its delivery limit is "
            "reported dead-lettered and never recorded or queued for a person",
            engine=deadletter.DeadLetterOnlyReported,
        ),
        # reached by the exploration's operators, on a run the faults stopped (issue 24)
        mutant(
            "fresh_key_retry_control",
            "000: retry with the same key — an operator's retry sends the effect in doubt "
            "again under a freshly minted idempotency key",
            workers=controls.FreshKeyRetryWorkers,
        ),
    )
)

# what the world hands an engine and what time does to a run (issue 24): a secret the engine
# stores (`canary.py`), a time budget that a restart resets and old limits mapped onto what is
# left (`deadline.py`)
WIDER.update(
    (s.name, s)
    for s in (
        mutant(
            "signing_key_in_checkpoint",
            "000: a secret serialized into the checkpoint because it was in memory — the "
            "resolved signing key carried in each checkpoint, for a resume elsewhere",
            engine=canary.KeyCarriedInCheckpoint,
        ),
        mutant(
            "time_budget_restarted_on_resume",
            "000: restarting resets safety limits — the time left counted from each resume, so "
            "the time a run spends down is never charged",
            engine=deadline.TimeLeftCountedFromResume,
        ),
        mutant(
            "legacy_limits_taken_as_left",
            "000: an old checkpoint migrated by field name — v1's limits taken as the budget "
            "left, what it had spent dropped",
            engine=deadline.LegacyLimitsTakenAsLeft,
        ),
    )
)

# a slow worker whose lease lapsed after it committed `started` (issue 24): its store writes are
# fenced, its send is not; only a pause right after `started` shows it (`stale.py`)
WIDER.update(
    (s.name, s)
    for s in (
        mutant(
            "send_after_lapsed_lease",
            "001: leases and fencing tokens guard the store's writes, not the send — the lease "
            "checked when `started` is committed and not again before the request goes out",
            engine=stale.StartedMarkTakenAsLease,
        ),
    )
)

# what only a real death shows (issue 24): process memory gone, no `finally` run (`graceful.py`)
WIDER.update(
    (s.name, s)
    for s in (
        mutant(
            "sent_table_in_memory",
            "000: testing only graceful shutdown — what was sent is remembered in a "
            "process-global table, trusted over the service on recovery: an effect the table "
            "never saw is sent again",
            executor=graceful.SentTableTrusted,
        ),
        mutant(
            "lease_freed_in_finally",
            "000: testing only graceful shutdown — the lease freed in a `finally` on every way "
            "out, so a lease still named is taken for a live worker's and the run left to it",
            engine=graceful.LeaseFreedOnTheWayOut,
        ),
    )
)
