"""The oracle is honest about an engine it cannot see into.

The docs' own-engine example (`docs/examples/json_file_engine.py`, copied out of the
repository as a team would) exposes no history reader and no tamper hook. A small campaign of
`order_saga` against it must answer unknown wherever a checker lacks its evidence (never true),
and still find the example's real bugs from the services' journals.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.catalogue import installed
from killpoint.harness.checkers.authority import UNTRUSTED
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.results import CampaignResult, RunResult, Valid

EXAMPLE = Path(__file__).parents[3] / "docs" / "examples" / "json_file_engine.py"
# What these checkers read is the engine's own records, which this engine does not expose.
NEED_A_READER = ("monotonic_sequence", "budget_preserved")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CampaignResult]:
    folder = tmp_path_factory.mktemp("team")
    (folder / "json_file_engine.py").write_text(EXAMPLE.read_text())
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.syspath_prepend(str(folder))
        patch.delitem(sys.modules, "json_file_engine", raising=False)
        config = CampaignConfig(
            scenarios=[installed().scenarios["order_saga"]],
            workdir=folder / "out",
            engine=load_engine("json_file_engine:factory"),
            double=False,
            interleave=False,
        )
        with Campaign(config) as running:
            yield running.run()
        sys.modules.pop("json_file_engine", None)


def _verdicts(run: RunResult) -> dict[str, Valid]:
    return {v.checker: v.valid for v in run.verdicts}


def _tamper_cases(result: CampaignResult) -> list[RunResult]:
    return [r for r in result.runs if r.kind == "named" and r.schedule.tamper]


def test_the_campaign_ran_crashes_network_faults_and_the_tamper_cases(
    campaign: CampaignResult,
) -> None:
    kinds = {r.kind for r in campaign.runs}
    assert {"clean", "single", "network", "named"} <= kinds
    assert {t.kind for r in _tamper_cases(campaign) for t in r.schedule.tamper} == {
        "legacy_v2",
        "legacy_unsafe",
        "legacy_no_limits",
        "flip_byte",
        "wrong_tenant",
        "foreign_tenant",
        "foreign_workflow",
        "rollback",
    }


def test_checkers_that_need_the_engine_s_records_are_unknown_on_every_run(
    campaign: CampaignResult,
) -> None:
    for run in campaign.runs:
        verdicts = _verdicts(run)
        assert [verdicts[name] for name in NEED_A_READER] == ["unknown", "unknown"], run.label


def test_a_tampering_the_engine_cannot_stage_is_unknown_not_recovered(
    campaign: CampaignResult,
) -> None:
    for run in _tamper_cases(campaign):
        verdicts = _verdicts(run)
        assert verdicts["expected_recovery"] == "unknown", run.label
        # authority judges the tamperings a loader must refuse; a clean migration is not one
        refused = any(t.kind in UNTRUSTED for t in run.schedule.tamper)
        assert verdicts["authority"] == ("unknown" if refused else True), run.label


def test_no_verdict_is_true_where_its_evidence_is_missing(campaign: CampaignResult) -> None:
    tamper_ids = {r.run_id for r in _tamper_cases(campaign)}
    for run in campaign.runs:
        verdicts = _verdicts(run)
        blind = list(NEED_A_READER)
        if run.run_id in tamper_ids:
            blind.append("expected_recovery")
        if run.final_status == "completed":
            blind.append("verified_completion")  # its outputs are not visible either
        assert all(verdicts[name] is not True for name in blind), (run.label, verdicts)
        assert run.valid is not True, run.label


def test_its_real_bugs_are_still_found_from_the_journals(campaign: CampaignResult) -> None:
    false = {
        (v.checker, label)
        for r in campaign.runs
        for label in r.crashed_at or [r.label]
        for v in r.verdicts
        if v.valid is False
    }
    # killed after the carrier accepted the shipment and before the JSON file was written
    assert ("single_effect", "w0 ship:transport.response_received") in false
    # it never reads back what it did before declaring completion
    completed = [r for r in campaign.runs if r.final_status == "completed"]
    assert completed and all(_verdicts(r)["verified_completion"] is False for r in completed)
