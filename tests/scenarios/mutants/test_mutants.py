"""Every mutant engine is caught, by the checker its mistake should trip, in a few runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.hunt import hunt
from killpoint.harness.checkers import CHECKERS
from killpoint.harness.engines.reference import REFERENCE, ReferenceEngine
from killpoint.harness.results import MutantResult
from killpoint.harness.schedule import FaultSchedule, HitPoint, Tamper
from killpoint.reference.controls import Controls
from killpoint.reference.dispatcher import Engine
from killpoint.reference.lease import Fence
from killpoint.reference.ledger import EffectExecutor
from killpoint.reference.steps import Steps
from killpoint.reference.store import CheckpointLog
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.pins import PINS


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
# here; the other two in tests/scenarios/mutants/test_mutants_durable.py)
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
        wall-clock times, the schedule file's place (a dump leaves out each worker's wall time)."""
        assert result.run is not None
        run = result.run.model_copy(
            update={
                "schedule_file": None,
                "measures": result.run.measures.model_copy(
                    update={"recovery_wall_s": 0.0, "wall_s": None}
                ),
            }
        )
        return result.model_copy(update={"seconds_to_detection": None, "run": run})

    assert untimed(first).model_dump() == untimed(second).model_dump()
    assert first.seconds_to_detection is not None
