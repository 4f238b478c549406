"""Every mutant engine is caught, by the checker its mistake should trip, in a few runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.campaign import Campaign, CampaignConfig
from killpoint.harness.checkers import CHECKERS
from killpoint.harness.engine.controls import Controls
from killpoint.harness.engine.dispatcher import Engine
from killpoint.harness.engine.fence import Fence
from killpoint.harness.engine.ledger import EffectExecutor
from killpoint.harness.engine.steps import Steps
from killpoint.harness.engine.store import CheckpointLog
from killpoint.harness.engines.reference import REFERENCE, ReferenceEngine
from killpoint.harness.hunt import hunt
from killpoint.harness.results import MutantResult
from killpoint.harness.schedule import FaultSchedule, HitPoint, Tamper
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS

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


def test_one_mutant_per_mistake_each_a_subclass_of_the_reference() -> None:
    assert set(MUTANTS) == set(PINS)
    for name, spec in MUTANTS.items():
        assert spec.name == name
        assert isinstance(spec.factory, type) and issubclass(spec.factory, ReferenceEngine)
        assert spec.factory is not ReferenceEngine
        assert spec.description


# the parts of the reference a mutant may swap, and the class each must stay a kind of
PARTS: dict[str, type] = {
    "engine_class": Engine,
    "steps_class": Steps,
    "fence": Fence,
    "log": CheckpointLog,
    "controls_class": Controls,
}


def _overrides(cls: type, reference: type) -> set[str]:
    """The methods `cls` defines in place of `reference`'s (dunders aside)."""
    names: set[str] = set()
    for klass in cls.__mro__[: cls.__mro__.index(reference)]:
        names |= {
            n
            for n, v in vars(klass).items()
            if callable(v) and not (n.startswith("__") and n.endswith("__"))
        }
    return names


def _seams(cls: type, reference: type) -> set[str]:
    """What a mutant part overrides; each must be a public method of the reference's part."""
    overrides = _overrides(cls, reference)
    assert overrides <= {n for n in dir(reference) if not n.startswith("_")}, overrides
    if issubclass(cls, Steps) and cls.executor is not EffectExecutor:
        overrides |= {f"executor.{n}" for n in _seams(cls.executor, EffectExecutor)}
        overrides |= {"executor.__init__"} if "__init__" in vars(cls.executor) else set()
    return overrides


@pytest.mark.parametrize("name", sorted(PINS))
def test_each_mutant_swaps_a_part_of_the_reference_overriding_public_seams_only(
    name: str,
) -> None:
    factory = MUTANTS[name].factory
    assert isinstance(factory, type) and issubclass(factory, ReferenceEngine)
    swapped = {p for p in PARTS if getattr(factory, p) is not getattr(ReferenceEngine, p)}
    assert len(swapped) in (1, 2), swapped
    seams = _seams(factory, ReferenceEngine) - set(PARTS)
    for part in swapped:
        value = getattr(factory, part)
        cls = value if isinstance(value, type) else type(value)
        assert issubclass(cls, PARTS[part]) and cls is not PARTS[part]
        seams |= _seams(cls, PARTS[part])
    assert len(seams) in (1, 2, 3), seams


@pytest.mark.parametrize("name", sorted(PINS))
def test_mutant_is_caught_by_its_checker(name: str, tmp_path: Path) -> None:
    scenario, checker, most = PINS[name]
    result = hunt(MUTANTS[name], [CATALOGUE[scenario]], tmp_path)
    assert result.caught, f"{name} escaped"
    assert result.checker == checker, result
    assert result.runs_to_detection is not None and result.runs_to_detection <= most
    assert result.schedule is not None and result.schedule.scenario == scenario


def test_the_reference_is_not_caught_where_the_mutants_are(tmp_path: Path) -> None:
    """No false positives: the same plan over the scenarios that catch the store mutants."""
    chosen = [CATALOGUE["expensive_reuse"], CATALOGUE["research_publish_thin_draft"]]
    result = hunt(REFERENCE, chosen, tmp_path)
    assert not result.caught, result


def _verdicts(engine: str, scenario: str, schedule: FaultSchedule, root: Path) -> dict[str, object]:
    return _judged(engine, scenario, schedule, root)[1]


def _judged(
    engine: str, scenario: str, schedule: FaultSchedule, root: Path
) -> tuple[str, dict[str, object]]:
    """(final status, verdict per checker) of one run of `engine` (a mutant, or "reference")."""
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    config = CampaignConfig(scenarios=[CATALOGUE[scenario]], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        result, _ = campaign.execute(CATALOGUE[scenario], schedule, "single")
    return result.final_status, {v.checker: v.valid for v in result.verdicts}


def test_an_output_row_altered_between_workers_stops_the_run_unless_trusted(
    tmp_path: Path,
) -> None:
    """A step output lives in its own row, pinned by the checkpoint's hash chain: the reference
    refuses to go on from an altered one; an engine that checks nothing acts on it."""
    schedule = FaultSchedule(
        scenario="research_publish",
        run_id="output-altered",
        crashes=(HitPoint(worker=0, step="draft", boundary="step.begin"),),
        tamper=(Tamper(after_worker=0, kind="output_altered"),),
    )
    status, verdicts = _judged("reference", "research_publish", schedule, tmp_path / "r")
    assert status == "quarantined"
    assert all(v is True for v in verdicts.values()), verdicts
    trusting = "checkpoint_trusted_unchecked"
    _, verdicts = _judged(trusting, "research_publish", schedule, tmp_path / "m")
    assert verdicts["authority"] is False


# checker -> a mutant whose hunt it ends (the pins above), or for progress a pinned schedule
CHECKER_MUTANT = {
    "single_effect": "fresh_idempotency_key_on_resume",
    "monotonic_sequence": "no_compare_and_swap",
    "budget_preserved": "budgets_reset_on_restart",
    "authority": "approvals_not_revalidated",
    "verified_completion": "completion_without_verification",
    "progress": "compensation_as_rollback",
    "attempts_accounted": "retried_in_the_client",
    "intent_applied": "intent_rederived_on_retry",
    "expected_outcome": "gives_up_on_doubt",
    "fencing": "takeover_keeps_token",
    "single_compensation": "compensation_repeated_on_resume",
    "handoff_terms": "clock_of_the_checkpoint",
    "engine_failure": "artifact_parsed_before_hash_check",
    "atomic_write": "non_atomic_file_write",
    "intended_delete": "unchecked_delete",
    "deploy_policy": "resumes_across_versions",
    "message_integrity": "redelivered_start_replaces_input",
    "isolation": "approval_found_by_scope",
    "durable_outcome": "dead_letter_only_reported",
    "operator_queue": "dead_letter_only_reported",
    "secrets_kept": "signing_key_in_checkpoint",
    "deadline_kept": "time_budget_restarted_on_resume",
}
# made false on a pinned schedule, after an earlier checker ended the mutant's hunt (progress
# here; the other two in tests/scenarios/test_mutants_durable.py)
ON_A_PINNED_SCHEDULE = frozenset({"progress", "durable_outcome", "operator_queue"})


def test_every_checker_is_made_false_by_some_mutant() -> None:
    """Issue 4's acceptance: each checker has a broken engine that makes it return false."""
    assert set(CHECKER_MUTANT) == set(CHECKERS)
    for checker, mutant in CHECKER_MUTANT.items():
        if checker not in ON_A_PINNED_SCHEDULE:
            assert PINS[mutant][1] == checker


def test_rollback_that_cannot_be_redone_never_finishes(tmp_path: Path) -> None:
    """Progress: a crash after the rollback bookkeeping, before its checkpoint, leaves every
    later worker refusing to compensate again: no terminal state."""
    crash = HitPoint(worker=0, step="refund", boundary="checkpoint.built")
    schedule = FaultSchedule(scenario="order_saga_refund", run_id="rollback", crashes=(crash,))
    verdicts = _verdicts("compensation_as_rollback", "order_saga_refund", schedule, tmp_path)
    assert verdicts["progress"] is False


def test_a_compensated_saga_needs_its_refund_once(tmp_path: Path) -> None:
    """single_effect holds a compensated saga to one charge and one refund, like completion."""
    clean = FaultSchedule(scenario="order_saga_refund", run_id="clean")
    assert (
        _verdicts("compensation_as_rollback", "order_saga_refund", clean, tmp_path / "m")[
            "single_effect"
        ]
        is False
    )
    refund = CATALOGUE["order_saga_refund"]
    config = CampaignConfig(engine=REFERENCE, scenarios=[refund], workdir=tmp_path / "r")
    with Campaign(config) as campaign:
        result, history = campaign.execute(refund, clean, "clean")
    assert result.final_status == "compensated"
    assert {v.checker: v.valid for v in result.verdicts}["single_effect"] is True
    assert sorted(a.operation for a in history.applied) == ["create_charge", "refund"]


def test_the_same_hunt_twice_gives_the_same_result(tmp_path: Path) -> None:
    spec, scenarios = MUTANTS["global_completed_flag"], [CATALOGUE["batch"]]
    first = hunt(spec, scenarios, tmp_path / "a")
    second = hunt(spec, scenarios, tmp_path / "b")
    assert first.run is not None and second.run is not None
    assert first.run.schedule_file != second.run.schedule_file  # each hunt its own folder

    def untimed(result: MutantResult) -> MutantResult:
        """Without what the clock and the folder decide: the time to detection, the recovery's
        wall-clock time, the schedule file's place (a dump leaves out each worker's wall time)."""
        assert result.run is not None
        run = result.run.model_copy(
            update={
                "schedule_file": None,
                "measures": result.run.measures.model_copy(update={"recovery_wall_s": 0.0}),
            }
        )
        return result.model_copy(update={"seconds_to_detection": None, "run": run})

    assert untimed(first).model_dump() == untimed(second).model_dump()
    assert first.seconds_to_detection is not None
