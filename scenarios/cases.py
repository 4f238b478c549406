"""The named cases: every row of seed 000's fault-injection table and seed 001's test matrix.

Each case is a scenario, a fault schedule and the seed's expected recovery, written as a
predicate over the run's history (beyond the oracle, which every run must also pass). The
campaign runs them all; the tests pin each one; the mutants are hunted with them.
"""

from __future__ import annotations

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.scenario import NamedCase
from killpoint.harness.schedule import ClockJump, Deploy, Interleave, Tamper
from killpoint.scenarios.case_parts import (
    NEW_PROMPT,
    UNINDEXED,
    a_worker_lost,
    all_of,
    at_most_once,
    branched,
    crash,
    grants,
    nothing_after_tamper,
    nothing_deleted,
    once,
    receipt_committed,
    reconciled,
    schedule,
    sends,
    status_in,
    unpublished,
)

CASES: tuple[NamedCase, ...] = (
    NamedCase(
        "crash_before_external_call",
        "000: Crash before external call",
        schedule(
            "research_publish",
            "crash_before_external_call",
            crashes=[crash("publish", "effect.started")],
        ),
        "Resume from intent and execute once: one downstream object, one committed receipt.",
        all_of(status_in("completed"), once("cms"), receipt_committed("publish")),
    ),
    NamedCase(
        "crash_after_commit_before_response",
        "000: Crash after downstream commit but before response",
        schedule(
            "research_publish",
            "crash_after_commit_before_response",
            crashes=[crash("publish", "transport.response_received")],
        ),
        "Reconcile by stable key, then commit the existing receipt: no duplicate effect.",
        all_of(status_in("completed"), once("cms"), reconciled("publish")),
    ),
    NamedCase(
        "crash_after_checkpoint_commit",
        "000: Crash after checkpoint commit",
        schedule(
            "order_saga",
            "crash_after_checkpoint_commit",
            crashes=[crash("charge", "checkpoint.committed")],
        ),
        "Resume from the next state without rerunning the previous step.",
        all_of(
            status_in("completed"),
            lambda h: (
                None
                if sends(h, "payments", "create_charge") == 1
                else "the charge was attempted again after its checkpoint committed"
            ),
        ),
    ),
    NamedCase(
        "two_workers_recover",
        "000: Two workers recover simultaneously",
        schedule(
            "research_publish",
            "two_workers_recover",
            crashes=[crash("publish", "effect.prepared")],
            interleave=Interleave(after_worker=0, switch_at=(0,)),
        ),
        "Only one acquires the valid lease: exactly one new checkpoint sequence.",
        all_of(status_in("completed"), once("cms"), a_worker_lost),
    ),
    NamedCase(
        "approval_expires_during_downtime",
        "000: Approval expires during downtime",
        schedule(
            "approval_refund",
            "approval_expires_during_downtime",
            crashes=[crash("refund", "step.begin")],
            downtime_s=7200.0,
        ),
        "Resume to a renewed approval gate, not the protected action.",
        all_of(status_in("completed"), grants(2), once("payments", "refund")),
    ),
    NamedCase(
        "schema_old_migrates",
        "000: Checkpoint schema is old (migratable)",
        schedule(
            "order_saga",
            "schema_old_migrates",
            crashes=[crash("ship", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="legacy_v2")],
        ),
        "Migrate through a tested adapter.",
        all_of(status_in("completed"), once("payments", "create_charge")),
    ),
    NamedCase(
        "schema_old_quarantined",
        "000: Checkpoint schema is old (missing security field)",
        schedule(
            "order_saga",
            "schema_old_quarantined",
            crashes=[crash("ship", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="legacy_unsafe")],
        ),
        "Quarantine the run: no silent defaulting of missing security fields.",
        all_of(status_in("quarantined"), nothing_after_tamper),
    ),
    NamedCase(
        "artifact_hash_differs",
        "000: Artifact is missing or hash differs (altered)",
        schedule(
            "research_publish",
            "artifact_hash_differs",
            crashes=[crash("draft", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="artifact_corrupt")],
        ),
        "Stop and regenerate or escalate: corrupted content is never published.",
        all_of(status_in("needs_review", "completed"), at_most_once("cms", "create_post")),
    ),
    NamedCase(
        "artifact_missing",
        "000: Artifact is missing or hash differs (missing)",
        schedule(
            "research_publish",
            "artifact_missing",
            crashes=[crash("draft", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="artifact_missing")],
        ),
        "Stop and regenerate or escalate according to policy.",
        all_of(status_in("needs_review", "completed"), at_most_once("cms", "create_post")),
    ),
    NamedCase(
        "model_or_prompt_version_changes",
        "000: Model or prompt version changes",
        schedule(
            "research_publish",
            "model_or_prompt_version_changes",
            crashes=[crash("draft", "step.begin")],
            deploys=[Deploy(from_worker=1, versions=NEW_PROMPT)],
        ),
        "The compatibility policy chooses a branch; lineage records it, old state auditable.",
        all_of(status_in("completed"), branched, once("cms")),
    ),
    NamedCase(
        "checkpoint_tampered",
        "000: Checkpoint record is tampered",
        schedule(
            "order_saga",
            "checkpoint_tampered",
            crashes=[crash("ship", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="flip_byte")],
        ),
        "Integrity verification rejects it: no deserialization or tool execution.",
        all_of(status_in("quarantined"), nothing_after_tamper),
    ),
    NamedCase(
        "checkpoint_wrong_tenant",
        "000: Checkpoint record is tampered (wrong tenant)",
        schedule(
            "order_saga",
            "checkpoint_wrong_tenant",
            crashes=[crash("ship", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="wrong_tenant")],
        ),
        "The loader rejects a checkpoint of another tenant before using any field.",
        all_of(status_in("quarantined"), nothing_after_tamper),
    ),
    NamedCase(
        "kill_before_external_call",
        "001: Kill the worker before each external call",
        schedule("email", "kill_before_external_call", crashes=[crash("notify", "effect.started")]),
        "An irreversible, unqueryable send in doubt stops for review; it is never sent twice.",
        all_of(status_in("needs_review"), at_most_once("mailer")),
    ),
    NamedCase(
        "kill_after_external_call",
        "001: Kill the worker after each external call",
        schedule(
            "email", "kill_after_external_call", crashes=[crash("notify", "effect.response_read")]
        ),
        "The message went out once; the run stops for review rather than sending again.",
        all_of(status_in("needs_review"), at_most_once("mailer"), once("mailer")),
    ),
    NamedCase(
        "response_lost_outbox",
        "000: Crash after downstream commit but before response (through a local outbox)",
        schedule(
            "email_outbox",
            "response_lost_outbox",
            network=FaultPlan(
                rules=(
                    FaultRule(
                        service="outbound",
                        operation="send",
                        occurrence=1,
                        mode=FaultMode.LOST_RESPONSE,
                    ),
                ),
                seed=UNINDEXED,
            ),
        ),
        "Reconcile by the message's fingerprint, waiting out the search's lag: the message is "
        "found and its provider id committed, never sent twice.",
        all_of(status_in("completed"), at_most_once("outbound"), reconciled("notify")),
    ),
    NamedCase(
        "kill_before_external_call_outbox",
        "001: Kill the worker before each external call (through a local outbox)",
        schedule(
            "email_outbox",
            "kill_before_external_call_outbox",
            crashes=[crash("notify", "effect.started")],
        ),
        "A search proves the message was never sent: it is sent once and the run completes.",
        all_of(status_in("completed"), once("outbound")),
    ),
    NamedCase(
        "file_write_torn_by_a_crash",
        "001: For file writes, use content hashes and atomic rename",
        schedule(
            "file_report",
            "file_write_torn_by_a_crash",
            crashes=[crash("publish", "transport.response_received")],
        ),
        "The report is at its name whole or not at all; the one written is found by its hash.",
        all_of(status_in("completed"), reconciled("publish")),
    ),
    NamedCase(
        "delete_after_another_writer_saved",
        "001: For deletes, verify the resource state before and after",
        schedule(
            "file_report",
            "delete_after_another_writer_saved",
            crashes=[crash("delete_draft", "step.begin")],
            network=FaultPlan.of(
                FaultRule(
                    service="files",
                    operation="delete",
                    occurrence=1,
                    mode=FaultMode.OVERWRITTEN,
                )
            ),
        ),
        "Another writer saved the draft while the worker was down: the delete names the version "
        "the run wrote, so the newer one is kept and the run stops for review.",
        all_of(status_in("needs_review"), nothing_deleted),
    ),
    NamedCase(
        "duplicate_queue_delivery",
        "001: Duplicate queue deliveries",
        schedule(
            "order_saga",
            "duplicate_queue_delivery",
            crashes=[crash("ship", "effect.prepared")],
            redeliver_start=True,
        ),
        "A redelivered start message is not fresh work: one charge, one shipment.",
        all_of(status_in("completed"), once("payments", "create_charge"), once("publisher")),
    ),
    NamedCase(
        "lease_expires_while_paused",
        "001: Delay one worker until its lease expires",
        schedule(
            "research_publish",
            "lease_expires_while_paused",
            crashes=[crash("publish", "effect.prepared")],
            interleave=Interleave(after_worker=0, switch_at=(0, 3), pause_expires_lease=True),
        ),
        "The paused worker's fencing token is stale: its writes are rejected, one post.",
        all_of(status_in("completed"), once("cms"), a_worker_lost),
    ),
    NamedCase(
        "visible_effect_withheld",
        "001: A success response while the visible effect is withheld",
        schedule(
            "order_saga",
            "visible_effect_withheld",
            network=FaultPlan.of(
                FaultRule(
                    service="publisher",
                    operation="publish",
                    occurrence=1,
                    mode=FaultMode.WITHHELD_VISIBILITY,
                    params={},
                )
            ),
        ),
        "Verification never sees the postcondition: the run stops for review, not completed.",
        all_of(status_in("needs_review"), once("publisher")),
    ),
    NamedCase(
        "prompt_changes_halfway",
        "001: Change the prompt version halfway",
        schedule(
            "research_publish",
            "prompt_changes_halfway",
            crashes=[crash("publish", "transport.response_received")],
            deploys=[Deploy(from_worker=1, versions=NEW_PROMPT)],
        ),
        "The new prompt branches the lineage and the post in doubt is reconciled, not redone.",
        all_of(status_in("completed"), branched, once("cms")),
    ),
    NamedCase(
        "clock_jump_mid_step",
        "001: Delay one worker (clock jump inside a step)",
        schedule(
            "approval_refund",
            "clock_jump_mid_step",
            clock_jumps=[ClockJump(at=crash("refund", "effect.prepared"), seconds=7200.0)],
        ),
        "An approval that lapses while the worker is inside the protected step sends it back to "
        "the gate before any attempt.",
        all_of(status_in("completed"), grants(2), once("payments", "refund")),
    ),
    NamedCase(
        "handoff_expires_during_downtime",
        "000: At branch and handoff boundaries (a deadline that passes while the receiver is down)",
        schedule(
            "handoff",
            "handoff_expires_during_downtime",
            crashes=[crash("accept_contract", "step.begin")],
            downtime_s=7200.0,
        ),
        "The receiver refuses the expired handoff rather than continuing on it: nothing published.",
        all_of(status_in("needs_review"), unpublished),
    ),
    NamedCase(
        "handoff_expires_after_acceptance",
        "000: At branch and handoff boundaries (the deadline passes between acceptance and work)",
        schedule(
            "handoff",
            "handoff_expires_after_acceptance",
            crashes=[crash("publish", "step.begin")],
            downtime_s=7200.0,
        ),
        "Accepted terms are checked again before acting on them: nothing published late.",
        all_of(status_in("needs_review"), unpublished),
    ),
)

BY_NAME = {case.name: case for case in CASES}
