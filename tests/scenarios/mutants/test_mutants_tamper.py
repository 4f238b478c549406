"""Each new tamper kind alone catches a mutant: on that kind's named case the mutant's run is
judged false, while every other named tampering of the same scenario (the kinds the harness had
before included) and every other kind of the table staged at the same crash let it through, so
without the new kind it escapes. The reference passes them all.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import RunResult
from killpoint.harness.scenario import Expect, NamedCase
from killpoint.harness.tampering import TAMPER_KINDS
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.cases import CASES
from killpoint.scenarios.mutants import MUTANTS
from killpoint.scenarios.tamper_cases import TAMPER_CASES
from killpoint.scenarios.time_cases import TIME_CASES

BY_NAME = {c.name: c for c in (*CASES, *TAMPER_CASES, *TIME_CASES)}

# tamper kind -> (its mutant, the named case that stages the kind where the mutant errs)
ALONE: dict[str, tuple[str, str]] = {
    "foreign_tenant": ("seal_not_tenant", "checkpoint_foreign_tenant"),
    "foreign_workflow": ("seal_not_workflow", "checkpoint_foreign_workflow"),
    "rollback": ("seal_not_sequence", "checkpoint_rollback"),
    "legacy_no_limits": ("legacy_limits_defaulted", "checkpoint_legacy_no_limits"),
    "legacy_no_approval_expiry": ("legacy_approval_never_lapses", "schema_old_no_approval_expiry"),
    "artifact_bitflip": ("artifact_size_not_hash", "research_publish_artifact_bitflip"),
    "artifact_truncated": ("artifact_cut_short_reused", "expensive_reuse_artifact_truncated"),
    "artifact_swapped": ("artifact_any_known_hash", "handoff_artifact_swapped"),
    "ledger_rolled_back": ("ledger_row_trusted_without_log", "ledger_rolled_back"),
    # a partly spent v1 budget: the old fixtures carried limits equal to what was left
    "legacy_v1": ("legacy_limits_taken_as_left", "schema_v1_partly_spent_fresh"),
}


def _run(spec: EngineSpec, case: NamedCase, root: Path, kind: str | None = None) -> RunResult:
    """The case's run; with `kind`, the same schedule staging that kind instead, judged by the
    oracle alone (the case's expectation is about its own kind)."""
    scenario = CATALOGUE[case.schedule.scenario]
    schedule, expect = case.schedule, case.expect
    judged: Expect | None = expect
    if kind is not None:
        tamper = tuple(t.model_copy(update={"kind": kind}) for t in schedule.tamper)
        schedule, judged = schedule.model_copy(update={"tamper": tamper}), None
    config = CampaignConfig(scenarios=[scenario], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        result, _ = campaign.execute(scenario, schedule, "named", judged)
    return result


def _others(case: NamedCase) -> list[NamedCase]:
    """Every other named case of the scenario that tampers with something else (the cases
    that stage the same kind at other ages of a run are that kind's too)."""
    kinds = {t.kind for t in case.schedule.tamper}
    return [
        c
        for c in BY_NAME.values()
        if c.schedule.scenario == case.schedule.scenario
        and c.schedule.tamper
        and not kinds & {t.kind for t in c.schedule.tamper}
    ]


def test_each_kind_s_mutant_and_case_is_registered_and_stages_that_kind() -> None:
    for kind, (mutant, case) in ALONE.items():
        assert mutant in MUTANTS
        assert [t.kind for t in BY_NAME[case].schedule.tamper] == [kind]


@pytest.mark.parametrize("kind", sorted(ALONE))
def test_the_mutant_is_caught_by_this_tamper_kind_alone(kind: str, tmp_path: Path) -> None:
    mutant, name = ALONE[kind]
    case = BY_NAME[name]
    caught = _run(MUTANTS[mutant], case, tmp_path / "caught")
    assert caught.valid is False, caught.verdicts
    for i, other in enumerate(_others(case)):
        escaped = _run(MUTANTS[mutant], other, tmp_path / f"other{i}")
        assert escaped.valid is True, (other.name, [v for v in escaped.verdicts if not v.valid])
    for other_kind in sorted(set(TAMPER_KINDS) - {kind}):  # every other kind, same crash
        escaped = _run(MUTANTS[mutant], case, tmp_path / other_kind, other_kind)
        assert escaped.valid is not False, (other_kind, escaped.verdicts)


@pytest.mark.parametrize("name", sorted(c.name for c in (*TAMPER_CASES, *TIME_CASES)))
def test_the_reference_recovers_as_each_tamper_case_expects(name: str, tmp_path: Path) -> None:
    result = _run(REFERENCE, BY_NAME[name], tmp_path)
    # the email run has one checkpoint, the one the ledger tampering names: fencing has no
    # other to compare, so it is unknown there (never false)
    blind = {"fencing"} if name == "ledger_rolled_back" else set()
    assert [v for v in result.verdicts if v.valid is not True and v.checker not in blind] == []
    assert all(v.valid is not False for v in result.verdicts)


def _declines(handle: object, workflow_id: str, kind: str) -> int | None:
    return None


@pytest.mark.parametrize("name", sorted(ALONE[k][1] for k in ALONE))
def test_a_hook_that_declines_the_kind_gets_unknown_never_a_false_violation(
    name: str, tmp_path: Path
) -> None:
    """The mutant's own mistake cannot show when nothing was tampered: no verdict is false, and
    the case's expected recovery is unknown, not "expected quarantined"."""
    mutant = ALONE[next(k for k, v in ALONE.items() if v[1] == name)][0]
    declining = replace(MUTANTS[mutant], tamper=_declines, ref=None)
    result = _run(declining, BY_NAME[name], tmp_path)
    verdicts = {v.checker: v.valid for v in result.verdicts}
    assert verdicts["expected_recovery"] == "unknown", result.verdicts
    assert False not in verdicts.values(), result.verdicts
