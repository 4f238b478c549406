"""Which checker catches each mutant engine, and how: pinned once, read by the mutant tests and the
threat model's."""

from __future__ import annotations

# mutant -> (the narrow scenario it is hunted with, the checker that catches it, at most runs)
PINS: dict[str, tuple[str, str, int]] = {
    "only_conversation_saved": ("research_publish", "single_effect", 5),
    "fresh_idempotency_key_on_resume": ("order_saga", "single_effect", 20),
    # the operators' reconcile and retry on the named lost-mail stop come before the singles
    "timeout_treated_as_failure": ("email", "single_effect", 22),
    "state_updated_after_call": ("research_publish", "single_effect", 5),
    # caught by a pair, after the exploration's first pass (30 runs)
    "no_compare_and_swap": ("expensive_reuse", "monotonic_sequence", 80),
    "lease_without_fencing_token": ("expensive_reuse", "single_effect", 100),
    "budgets_reset_on_restart": ("approval_refund", "budget_preserved", 2),
    "approvals_not_revalidated": ("approval_refund", "authority", 3),
    "checkpoint_trusted_unchecked": ("order_saga", "authority", 6),
    "old_schema_defaulted": ("order_saga", "authority", 6),
    # on the named case of a prompt deployed between workers
    "resumes_across_versions": ("research_publish", "deploy_policy", 10),
    "completion_without_verification": ("research_publish", "verified_completion", 1),
    "redelivery_treated_as_fresh_work": ("order_saga", "monotonic_sequence", 8),
    "global_completed_flag": ("batch", "single_effect", 10),
    "unvalidated_output_checkpointed": ("research_publish_thin_draft", "verified_completion", 1),
    "compensation_as_rollback": ("order_saga_refund", "single_effect", 2),
    "retried_in_the_client": ("order_saga", "attempts_accounted", 60),  # after the reads
    "intent_rederived_on_retry": ("order_saga", "intent_applied", 20),
    "gives_up_on_doubt": ("order_saga", "expected_outcome", 15),
    "takeover_keeps_token": ("order_saga", "fencing", 3),
    "compensation_repeated_on_resume": ("order_saga_refund", "single_compensation", 5),
    "clock_of_the_checkpoint": ("handoff", "handoff_terms", 3),
    "terms_checked_only_on_acceptance": ("handoff", "handoff_terms", 3),
    "artifact_parsed_before_hash_check": ("research_publish", "engine_failure", 5),
    "no_row_updated_is_an_error": ("research_publish", "engine_failure", 40),
    # tampering (scenarios/mutants/tamper.py): each caught on its tamper kind's named case
    "seal_not_tenant": ("order_saga", "authority", 12),
    "seal_not_workflow": ("order_saga", "authority", 12),
    "seal_not_sequence": ("order_saga", "authority", 14),
    "legacy_limits_defaulted": ("order_saga", "budget_preserved", 15),
    "legacy_approval_never_lapses": ("approval_refund", "authority", 6),
    "artifact_size_not_hash": ("research_publish", "expected_recovery", 12),
    "artifact_any_known_hash": ("handoff", "expected_recovery", 8),
    "artifact_cut_short_reused": ("expensive_reuse", "expected_recovery", 5),
    "ledger_row_trusted_without_log": ("email", "single_effect", 6),
    # exposed by the services' realism rules
    "republished_when_not_yet_visible": ("order_saga", "single_effect", 10),
    "charge_found_by_order_id": ("order_saga", "single_effect", 20),
    "resent_when_not_yet_searchable": ("email_outbox", "single_effect", 30),
    # file and delete effects: the torn write on the clean run, the delete on its named case
    "non_atomic_file_write": ("file_report", "atomic_write", 1),
    "unchecked_delete": ("file_report", "intended_delete", 3),
    # caught by the exploration after the plan's single crashes and network faults
    "unrecorded_attempt_resent": ("order_saga", "attempts_accounted", 150),
    "lookup_timeout_taken_as_absent": ("research_publish", "single_effect", 150),
    "failed_read_taken_as_verified": ("research_publish", "verified_completion", 150),
    "finished_run_restarted_on_redelivery": ("order_saga", "monotonic_sequence", 150),
    # the operator's tools: reached by the named case whose operator reconciles (a person)
    # (the jump to the final state; verified_completion and the case's recovery catch it too)
    "force_complete_control": ("email", "monotonic_sequence", 10),
    # lying start messages, told on a sample of the single crashes (harness.lies)
    # (after the operators' two runs on the named cases' stops, as every plan-found mutant)
    "redelivered_start_replaces_input": ("order_saga", "message_integrity", 20),
    "protected_call_beyond_its_approval": ("approval_refund", "authority", 15),
    # a shared world: caught beside a neighbour the plan gives the riskiest single crash told no
    # lie (a second tenant with the same order) or a named case at a gate (another workflow)
    "idempotency_key_without_workflow": ("approval_refund", "single_effect", 20),
    "approval_found_by_scope": ("approval_refund", "isolation", 4),
    # reported dead-lettered past the delivery limit, never recorded: the store says running
    # (the named case delivering the run 21 times; durable_outcome and operator_queue too)
    "dead_letter_only_reported": ("order_saga", "progress", 15),
    # the operators' retry of the dead-letter case's charge in doubt, right after the named
    # cases: sent under a fresh key, the service charges twice
    "fresh_key_retry_control": ("order_saga", "single_effect", 17),
    # what the world hands an engine (issue 24): its recording's canary scan finds the key
    "signing_key_in_checkpoint": ("order_saga", "secrets_kept", 1),
    # time (issue 24): the first resume after a downtime shows more time left than the clock
    # left; the partly spent v1 checkpoint (its named case) shows the steps grow back
    "time_budget_restarted_on_resume": ("order_saga", "deadline_kept", 2),
    "legacy_limits_taken_as_left": ("approval_refund", "budget_preserved", 5),
    # a pause right after `started` (issue 24), after the pairs at the lease: the recovery of
    # the crash at the lease sends from its `started` after the new owner sent
    "send_after_lapsed_lease": ("email_outbox", "single_effect", 180),
    # only a real death (issue 24): the real-tier pass after the singles and network faults
    # (the shipment's response in flight; the first commit, its lease left named)
    "sent_table_in_memory": ("order_saga", "single_effect", 70),
    "lease_freed_in_finally": ("order_saga", "progress", 66),
}
