"""The named cases: every row of seed 000's fault-injection table and seed 001's test matrix.

Each case is a scenario, a fault schedule and the seed's expected recovery, written as a
predicate over the run's history (beyond the oracle, which every run must also pass). The
campaign runs them all; the tests pin each one; the mutants are hunted with them.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.fake_services.realism import ACTIVE, search_lag_s
from killpoint.harness.contract.records import Versions
from killpoint.harness.history import History
from killpoint.harness.scenario import Expect, NamedCase, NotApplicable
from killpoint.harness.schedule import (
    ClockJump,
    Deploy,
    FaultSchedule,
    HitPoint,
    Interleave,
    Tamper,
)


def _crash(step: str, boundary: str, worker: int = 0) -> HitPoint:
    return HitPoint(worker=worker, step=step, boundary=boundary)


def _schedule(scenario: str, name: str, **fields: object) -> FaultSchedule:
    run_id = "case-" + name.replace("_", "-")  # run ids end up in slugs
    return FaultSchedule.model_validate({"scenario": scenario, "run_id": run_id, **fields})


def _effects(h: History, service: str, operation: str | None = None) -> int:
    return sum(1 for a in h.applied if a.service == service and operation in (None, a.operation))


def _sends(h: History, service: str, operation: str, after_seq: int = 0) -> int:
    return sum(r.service == service and r.operation == operation and r.seq > after_seq
               for r in h.requests)  # fmt: skip


def _unpublished(h: History) -> str | None:
    return None if _sends(h, "publisher", "publish") == 0 else "published anyway"


def _all(*checks: Callable[[History], str | None]) -> Expect:
    def expect(h: History) -> str | None:
        for check in checks:
            problem = check(h)
            if problem:
                return problem
        return None

    return expect


def _status(*allowed: str) -> Callable[[History], str | None]:
    return lambda h: None if h.final_status in allowed else (
        f"ended {h.final_status} ({h.final_reason}), expected {' or '.join(allowed)}")  # fmt: skip


def _once(service: str, operation: str | None = None) -> Callable[[History], str | None]:
    def check(h: History) -> str | None:
        n = _effects(h, service, operation)
        return None if n == 1 else f"{service} took effect {n} times, expected once"

    return check


def _at_most_once(service: str, operation: str = "send") -> Callable[[History], str | None]:
    def check(h: History) -> str | None:
        n = _sends(h, service, operation)
        return None if n <= 1 else f"{service} received {n} {operation} requests"

    return check


def _nothing_after_tamper(h: History) -> str | None:
    if not h.tampered:
        return "the schedule tampered with nothing"
    seq = h.tampered[0].journal_seq
    acted = [r for r in h.requests if r.seq > seq]
    return f"{len(acted)} request(s) after tampering" if acted else None


def _receipt_committed(step: str) -> Callable[[History], str | None]:
    def check(h: History) -> str | None:
        if not h.ledger:
            return NotApplicable("the engine keeps no effect ledger to hold the receipt")
        rows = [e for e in h.effects if e.step == step]
        if len(rows) != 1 or rows[0].status not in ("committed", "verified"):
            return f"ledger for {step}: {[r.status.value for r in rows]}, expected one receipt"
        return None

    return check


def _reconciled(step: str) -> Callable[[History], str | None]:
    def check(h: History) -> str | None:
        if not h.ledger:
            return NotApplicable("the engine keeps no effect ledger to reconcile")
        rows = [e for e in h.effects if e.step == step]
        if not rows or ("reconciled" not in rows[0].reason and rows[0].status != "verified"):
            return f"{step} was not reconciled: {rows}"
        return None

    return check


def _branched(h: History) -> str | None:
    if "versions" in h.lacks:
        return NotApplicable("the engine keeps no versions to branch on")
    branches = [c for c in h.checkpoints if c.decision == "branch"]
    if not branches:
        return "no checkpoint records a branch decision"
    if branches[0].parent_run_id is None:
        return "the branch names no parent run"
    return None


def _grants(n: int) -> Callable[[History], str | None]:
    return lambda h: None if len(h.grants) >= n else (
        f"{len(h.grants)} approval(s) given, expected a renewed one")  # fmt: skip


def _a_worker_lost(h: History) -> str | None:
    if "lease" in h.lacks:
        return NotApplicable("the engine takes no lease for a worker to lose")
    lost = [w for w in h.workers if w.end == "error"]
    return None if lost else "no worker lost the race for the lease"


def _nothing_deleted(h: History) -> str | None:
    deleted = _effects(h, "files", "delete")
    return f"{deleted} object(s) deleted, expected the newer version kept" if deleted else None


# the services' draws for a run seeded so: its message shows in the provider's search only
# after a lag, as half the messages do
UNINDEXED = next(s for n in count() if search_lag_s(ACTIVE, s := f"unindexed-{n}", 1) > 0)

NEW_PROMPT = Versions(
    plan="publish-flow@5", prompt="writer@13", model_contract="contract@1", tool_schema="tools@1"
)

CASES: tuple[NamedCase, ...] = (
    NamedCase(
        "crash_before_external_call",
        "000: Crash before external call",
        _schedule(
            "research_publish",
            "crash_before_external_call",
            crashes=[_crash("publish", "effect.started")],
        ),
        "Resume from intent and execute once: one downstream object, one committed receipt.",
        _all(_status("completed"), _once("cms"), _receipt_committed("publish")),
    ),
    NamedCase(
        "crash_after_commit_before_response",
        "000: Crash after downstream commit but before response",
        _schedule(
            "research_publish",
            "crash_after_commit_before_response",
            crashes=[_crash("publish", "transport.response_received")],
        ),
        "Reconcile by stable key, then commit the existing receipt: no duplicate effect.",
        _all(_status("completed"), _once("cms"), _reconciled("publish")),
    ),
    NamedCase(
        "crash_after_checkpoint_commit",
        "000: Crash after checkpoint commit",
        _schedule(
            "order_saga",
            "crash_after_checkpoint_commit",
            crashes=[_crash("charge", "checkpoint.committed")],
        ),
        "Resume from the next state without rerunning the previous step.",
        _all(
            _status("completed"),
            lambda h: (
                None
                if _sends(h, "payments", "create_charge") == 1
                else "the charge was attempted again after its checkpoint committed"
            ),
        ),
    ),
    NamedCase(
        "two_workers_recover",
        "000: Two workers recover simultaneously",
        _schedule(
            "research_publish",
            "two_workers_recover",
            crashes=[_crash("publish", "effect.prepared")],
            interleave=Interleave(after_worker=0, switch_at=(0,)),
        ),
        "Only one acquires the valid lease: exactly one new checkpoint sequence.",
        _all(_status("completed"), _once("cms"), _a_worker_lost),
    ),
    NamedCase(
        "approval_expires_during_downtime",
        "000: Approval expires during downtime",
        _schedule(
            "approval_refund",
            "approval_expires_during_downtime",
            crashes=[_crash("refund", "step.begin")],
            downtime_s=7200.0,
        ),
        "Resume to a renewed approval gate, not the protected action.",
        _all(_status("completed"), _grants(2), _once("payments", "refund")),
    ),
    NamedCase(
        "schema_old_migrates",
        "000: Checkpoint schema is old (migratable)",
        _schedule(
            "order_saga",
            "schema_old_migrates",
            crashes=[_crash("ship", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="legacy_v2")],
        ),
        "Migrate through a tested adapter.",
        _all(_status("completed"), _once("payments", "create_charge")),
    ),
    NamedCase(
        "schema_old_quarantined",
        "000: Checkpoint schema is old (missing security field)",
        _schedule(
            "order_saga",
            "schema_old_quarantined",
            crashes=[_crash("ship", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="legacy_unsafe")],
        ),
        "Quarantine the run: no silent defaulting of missing security fields.",
        _all(_status("quarantined"), _nothing_after_tamper),
    ),
    NamedCase(
        "artifact_hash_differs",
        "000: Artifact is missing or hash differs (altered)",
        _schedule(
            "research_publish",
            "artifact_hash_differs",
            crashes=[_crash("draft", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="artifact_corrupt")],
        ),
        "Stop and regenerate or escalate: corrupted content is never published.",
        _all(_status("needs_review", "completed"), _at_most_once("cms", "create_post")),
    ),
    NamedCase(
        "artifact_missing",
        "000: Artifact is missing or hash differs (missing)",
        _schedule(
            "research_publish",
            "artifact_missing",
            crashes=[_crash("draft", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="artifact_missing")],
        ),
        "Stop and regenerate or escalate according to policy.",
        _all(_status("needs_review", "completed"), _at_most_once("cms", "create_post")),
    ),
    NamedCase(
        "model_or_prompt_version_changes",
        "000: Model or prompt version changes",
        _schedule(
            "research_publish",
            "model_or_prompt_version_changes",
            crashes=[_crash("draft", "step.begin")],
            deploys=[Deploy(from_worker=1, versions=NEW_PROMPT)],
        ),
        "The compatibility policy chooses a branch; lineage records it, old state auditable.",
        _all(_status("completed"), _branched, _once("cms")),
    ),
    NamedCase(
        "checkpoint_tampered",
        "000: Checkpoint record is tampered",
        _schedule(
            "order_saga",
            "checkpoint_tampered",
            crashes=[_crash("ship", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="flip_byte")],
        ),
        "Integrity verification rejects it: no deserialization or tool execution.",
        _all(_status("quarantined"), _nothing_after_tamper),
    ),
    NamedCase(
        "checkpoint_wrong_tenant",
        "000: Checkpoint record is tampered (wrong tenant)",
        _schedule(
            "order_saga",
            "checkpoint_wrong_tenant",
            crashes=[_crash("ship", "step.begin")],
            tamper=[Tamper(after_worker=0, kind="wrong_tenant")],
        ),
        "The loader rejects a checkpoint of another tenant before using any field.",
        _all(_status("quarantined"), _nothing_after_tamper),
    ),
    NamedCase(
        "kill_before_external_call",
        "001: Kill the worker before each external call",
        _schedule(
            "email", "kill_before_external_call", crashes=[_crash("notify", "effect.started")]
        ),
        "An irreversible, unqueryable send in doubt stops for review; it is never sent twice.",
        _all(_status("needs_review"), _at_most_once("mailer")),
    ),
    NamedCase(
        "kill_after_external_call",
        "001: Kill the worker after each external call",
        _schedule(
            "email", "kill_after_external_call", crashes=[_crash("notify", "effect.response_read")]
        ),
        "The message went out once; the run stops for review rather than sending again.",
        _all(_status("needs_review"), _at_most_once("mailer"), _once("mailer")),
    ),
    NamedCase(
        "response_lost_outbox",
        "000: Crash after downstream commit but before response (through a local outbox)",
        _schedule(
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
        _all(_status("completed"), _at_most_once("outbound"), _reconciled("notify")),
    ),
    NamedCase(
        "kill_before_external_call_outbox",
        "001: Kill the worker before each external call (through a local outbox)",
        _schedule(
            "email_outbox",
            "kill_before_external_call_outbox",
            crashes=[_crash("notify", "effect.started")],
        ),
        "A search proves the message was never sent: it is sent once and the run completes.",
        _all(_status("completed"), _once("outbound")),
    ),
    NamedCase(
        "file_write_torn_by_a_crash",
        "001: For file writes, use content hashes and atomic rename",
        _schedule(
            "file_report",
            "file_write_torn_by_a_crash",
            crashes=[_crash("publish", "transport.response_received")],
        ),
        "The report is at its name whole or not at all; the one written is found by its hash.",
        _all(_status("completed"), _reconciled("publish")),
    ),
    NamedCase(
        "delete_after_another_writer_saved",
        "001: For deletes, verify the resource state before and after",
        _schedule(
            "file_report",
            "delete_after_another_writer_saved",
            crashes=[_crash("delete_draft", "step.begin")],
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
        _all(_status("needs_review"), _nothing_deleted),
    ),
    NamedCase(
        "duplicate_queue_delivery",
        "001: Duplicate queue deliveries",
        _schedule(
            "order_saga",
            "duplicate_queue_delivery",
            crashes=[_crash("ship", "effect.prepared")],
            redeliver_start=True,
        ),
        "A redelivered start message is not fresh work: one charge, one shipment.",
        _all(_status("completed"), _once("payments", "create_charge"), _once("publisher")),
    ),
    NamedCase(
        "lease_expires_while_paused",
        "001: Delay one worker until its lease expires",
        _schedule(
            "research_publish",
            "lease_expires_while_paused",
            crashes=[_crash("publish", "effect.prepared")],
            interleave=Interleave(after_worker=0, switch_at=(0, 3), pause_expires_lease=True),
        ),
        "The paused worker's fencing token is stale: its writes are rejected, one post.",
        _all(_status("completed"), _once("cms"), _a_worker_lost),
    ),
    NamedCase(
        "visible_effect_withheld",
        "001: A success response while the visible effect is withheld",
        _schedule(
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
        _all(_status("needs_review"), _once("publisher")),
    ),
    NamedCase(
        "prompt_changes_halfway",
        "001: Change the prompt version halfway",
        _schedule(
            "research_publish",
            "prompt_changes_halfway",
            crashes=[_crash("publish", "transport.response_received")],
            deploys=[Deploy(from_worker=1, versions=NEW_PROMPT)],
        ),
        "The new prompt branches the lineage and the post in doubt is reconciled, not redone.",
        _all(_status("completed"), _branched, _once("cms")),
    ),
    NamedCase(
        "clock_jump_mid_step",
        "001: Delay one worker (clock jump inside a step)",
        _schedule(
            "approval_refund",
            "clock_jump_mid_step",
            clock_jumps=[ClockJump(at=_crash("refund", "effect.prepared"), seconds=7200.0)],
        ),
        "An approval that lapses while the worker is inside the protected step sends it back to "
        "the gate before any attempt.",
        _all(_status("completed"), _grants(2), _once("payments", "refund")),
    ),
    NamedCase(
        "handoff_expires_during_downtime",
        "000: At branch and handoff boundaries (a deadline that passes while the receiver is down)",
        _schedule(
            "handoff",
            "handoff_expires_during_downtime",
            crashes=[_crash("accept_contract", "step.begin")],
            downtime_s=7200.0,
        ),
        "The receiver refuses the expired handoff rather than continuing on it: nothing published.",
        _all(_status("needs_review"), _unpublished),
    ),
    NamedCase(
        "handoff_expires_after_acceptance",
        "000: At branch and handoff boundaries (the deadline passes between acceptance and work)",
        _schedule(
            "handoff",
            "handoff_expires_after_acceptance",
            crashes=[_crash("publish", "step.begin")],
            downtime_s=7200.0,
        ),
        "Accepted terms are checked again before acting on them: nothing published late.",
        _all(_status("needs_review"), _unpublished),
    ),
)

BY_NAME = {case.name: case for case in CASES}
