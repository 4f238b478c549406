"""Mutant engines: the reference engine with exactly one of the mistakes the seeds name.

Each mutant overrides one public seam of the reference engine and is never a copy of it: the
ledger's executor (`ledger.py`), one kind of step or a check the steps share (`steps.py`), one
step of a resume (`resume.py`), or the store's fence or checkpoint log (`store.py`). `MUTANTS`
registers each as an `EngineSpec` under the snake_case name of its mistake; `killpoint mutants`
hunts every one of them with the campaign plan, and the oracle must catch them all.

Seed 000, "Common Checkpointing Mistakes", and seed 001, "Common pitfalls", name them; a few
come from the seeds' fault-injection tables (fencing, compare-and-swap, integrity, schemas,
approvals, verification), which say what a correct engine must do instead. Those in `oracle.py`
make mistakes only the later invariants see (attempts, bodies, outcome, fencing, compensation,
handoffs); those in `tamper.py` mistakes only a realistic tampering exposes (a validly sealed
checkpoint of another tenant, workflow or sequence; one legacy security field missing; an
artifact damaged without changing its size, or swapped for another of the run's); the one in
`failure.py` raises an exception of its own; those in `services.py` only realistic services
expose (lagging reads, other customers' objects); those in `files.py` get file and delete
effects wrong (a write in pieces at its final name, a delete by name alone); the one in
`deploy.py` resumes runs of another version on its own code.
`build.py` makes each spec. Those of a world wider than one run's are registered in `wider.py`:
`controls.py` gives the operator a force-complete, and a retry under a fresh key;
`deadletter.py` reports a run dead-lettered without recording it; those in `lies.py` take a
redelivered start message that lies at its word (its input over the validated one, or a
protected call built from it under an approval given for something else). Those in `world.py`
drop a scope only a shared world tests (a key without its workflow, an approval taken for
another run's): only a neighbour in the schedule (a second tenant, another workflow) makes them
do harm. `canary.py` carries the signing key in its checkpoints; `deadline.py` gets the time
budget wrong (restarted on each resume, or an old checkpoint's limits taken as what is left);
`stale.py` sends on a lease that lapsed after its `started` mark (only a pause there shows it);
`graceful.py` is right under every in-process death and wrong under a `SIGKILL` (a process-wide
table of what was sent, a lease freed in a `finally`).
"""

from __future__ import annotations

from killpoint.harness.protocol import EngineSpec
from killpoint.scenarios.mutants import (
    controls,
    deploy,
    failure,
    files,
    ledger,
    oracle,
    resume,
    services,
    steps,
    store,
    tamper,
)
from killpoint.scenarios.mutants.build import mutant
from killpoint.scenarios.mutants.wider import WIDER

__all__ = ["MUTANTS"]


MUTANTS: dict[str, EngineSpec] = {
    s.name: s
    for s in (
        mutant(
            "force_complete_control",
            "000: 'force complete' — an operator control marks a run complete while an effect "
            "is in doubt",
            workers=controls.ForceCompleteWorkers,
        ),
        mutant(
            "only_conversation_saved",
            "000: saving only the conversation — no effect ledger",
            executor=ledger.ConversationOnly,
        ),
        mutant(
            "fresh_idempotency_key_on_resume",
            "000: generating a fresh idempotency key on resume",
            executor=ledger.FreshKeyOnResume,
        ),
        mutant(
            "timeout_treated_as_failure",
            "000: marking a timeout as a failure (and retrying it)",
            executor=ledger.TimeoutIsFailure,
        ),
        mutant(
            "state_updated_after_call",
            "001: updating state after a call without a write-ahead record",
            executor=ledger.RecordAfterCall,
        ),
        mutant(
            "no_compare_and_swap",
            "000: no compare-and-swap — the last writer wins",
            fence=store.LastWriterWins(),
            log=store.WrittenOver(),
        ),
        mutant(
            "lease_without_fencing_token",
            "001: a lease without a fencing token",
            fence=store.Unfenced(),
            engine=resume.LeaseWithoutFencing,
        ),
        mutant(
            "budgets_reset_on_restart",
            "000: letting restarts reset limits",
            engine=resume.BudgetsResetOnRestart,
            workers=resume.WithScenarioLimits,
        ),
        mutant(
            "approvals_not_revalidated",
            "000: approvals not re-validated on resume",
            kinds=steps.ApprovalsNotRevalidated,
        ),
        mutant(
            "checkpoint_trusted_unchecked",
            "000: a checkpoint trusted without its integrity check",
            engine=resume.CheckpointTrustedUnchecked,
        ),
        mutant(
            "old_schema_defaulted",
            "000: ignoring version drift — an old schema defaulted silently",
            engine=resume.OldSchemaDefaulted,
        ),
        mutant(
            "resumes_across_versions",
            "000: ignoring version drift — old runs resumed on new code, unmigrated, unchecked",
            engine=deploy.ResumesAcrossVersions,
        ),
        mutant(
            "completion_without_verification",
            "000: completion declared without a verification read",
            kinds=steps.CompletionWithoutVerification,
        ),
        mutant(
            "redelivery_treated_as_fresh_work",
            "000: assuming the queue is the database — redelivery is fresh work",
            engine=resume.RedeliveryIsFreshWork,
        ),
        mutant(
            "global_completed_flag",
            "001: a global completed flag hides a partial batch",
            kinds=steps.GlobalCompletedFlag,
        ),
        mutant(
            "unvalidated_output_checkpointed",
            "000: checkpointing unvalidated model output",
            kinds=steps.UnvalidatedOutput,
        ),
        mutant(
            "compensation_as_rollback",
            "001: compensation treated as rollback",
            kinds=steps.CompensationAsRollback,
        ),
        mutant(
            "retried_in_the_client",
            "001: retries hidden from the ledger — the client retries a failed send in place",
            executor=oracle.RetriedInTheClient,
        ),
        mutant(
            "intent_rederived_on_retry",
            "000: an effect's arguments derived again on a retry, not taken from its intent",
            executor=oracle.IntentRederivedOnRetry,
        ),
        mutant(
            "gives_up_on_doubt",
            "001: every effect in doubt stops for review, even one the service can be asked about",
            executor=oracle.GivesUpOnDoubt,
        ),
        mutant(
            "takeover_keeps_token",
            "001: a lease taken over from a lapsed holder keeps its fencing token",
            engine=oracle.TakeoverKeepsToken,
        ),
        mutant(
            "compensation_repeated_on_resume",
            "001: compensation assumed safe to repeat — a resumed undo is sent again",
            kinds=oracle.CompensationRepeatedOnResume,
        ),
        mutant(
            "clock_of_the_checkpoint",
            "000: a resumed step reads the time of its checkpoint, not the clock",
            kinds=oracle.ClockOfTheCheckpoint,
        ),
        mutant(
            "terms_checked_only_on_acceptance",
            "000: a handoff's terms checked when it is accepted, not again before acting on it",
            kinds=oracle.TermsCheckedOnlyOnAcceptance,
        ),
        # an engine failing with an exception of its own (issue 13, item 6)
        mutant(
            "artifact_parsed_before_hash_check",
            "000: an altered artifact parsed before its hash is checked — the parser's error "
            "escapes",
            kinds=failure.ArtifactParsedBeforeHashCheck,
        ),
        mutant(
            "no_row_updated_is_an_error",
            "001: a lost compare-and-swap raised as 'no row updated', not handled as a lost lease",
            fence=store.NoRowUpdatedIsAnError(),
        ),
        # -- tampering: each caught by one kind in harness.tampering's table ------------------
        mutant(
            "seal_not_tenant",
            "000: the seal is checked against the row's tenant, not against the run's tenant",
            engine=tamper.SealNotTenant,
        ),
        mutant(
            "seal_not_workflow",
            "000: a sealed checkpoint of this tenant is taken without asking which workflow's",
            engine=tamper.SealNotWorkflow,
        ),
        mutant(
            "seal_not_sequence",
            "000: any validly sealed checkpoint of the workflow is taken, whatever its sequence",
            engine=tamper.SealNotSequence,
        ),
        mutant(
            "legacy_limits_defaulted",
            "000: an old checkpoint without its budget limits migrates with the default ones",
            engine=tamper.LegacyLimitsDefaulted,
        ),
        mutant(
            "legacy_approval_never_lapses",
            "000: an old checkpoint's approval without an expiry migrates as valid for a day",
            engine=tamper.LegacyApprovalNeverLapses,
        ),
        mutant(
            "artifact_size_not_hash",
            "000: an artifact is checked by the size recorded beside it, not by its hash",
            kinds=tamper.SizeNotHash,
        ),
        mutant(
            "artifact_any_known_hash",
            "000: an artifact's bytes need only hash to one of the run's artifacts",
            kinds=tamper.AnyKnownArtifact,
        ),
        mutant(
            "artifact_cut_short_reused",
            "000: an artifact shorter than recorded is taken for an upload in flight and reused",
            kinds=tamper.InFlightUploadTrusted,
        ),
        mutant(
            "ledger_row_trusted_without_log",
            "001: a ledger row that says prepared is taken as never sent, whatever its log says",
            engine=tamper.LedgerTrustedAsItStands,
        ),
        # exposed by the services' realism rules (fake_services/realism.py)
        mutant(
            "republished_when_not_yet_visible",
            "001: a read right after the write taken as the truth — not yet visible is lost",
            kinds=services.RepublishedWhenNotYetVisible,
        ),
        mutant(
            "charge_found_by_order_id",
            "000: a charge in doubt looked up by its order id, another customer's taken as its own",
            executor=services.ChargeFoundByOrderId,
        ),
        mutant(
            "resent_when_not_yet_searchable",
            "001: a search right after the send taken as the truth: a message the provider has "
            "not indexed yet is sent again",
            executor=services.ResentWhenNotYetSearchable,
        ),
        # file and delete effects (issue 17): what an object store lets an engine get wrong
        mutant(
            "non_atomic_file_write",
            "001: a file written in place, in pieces, with no atomic rename: torn at its name "
            "between two pieces",
            executor=files.NonAtomicFileWrite,
        ),
        mutant(
            "unchecked_delete",
            "001: a delete that does not verify the resource state: whatever is at the name is "
            "deleted, another writer's newer version too",
            executor=files.UncheckedDelete,
        ),
    )
}

MUTANTS.update(WIDER)
