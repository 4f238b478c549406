"""JUnit XML: one case per crashed boundary, failures carry the checker and the evidence."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from killpoint.harness.results import CampaignResult
from killpoint.reports.junit import EXPECTED_SUITE, MUTANT_SUITE, write_junit
from tests.support.campaigns import EXPECTING_TEST, with_a_catch_as_expected


def _parse(campaign: CampaignResult, tmp_path: Path) -> ET.Element:
    path = write_junit(campaign, tmp_path / "junit.xml")
    return ET.parse(path).getroot()


def test_one_testcase_per_crashed_boundary_with_the_scenario_as_classname(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    root = _parse(campaign, tmp_path)
    saga = root.find("testsuite[@name='order_saga']")
    assert saga is not None
    boundary_cases = [c.get("name") for c in saga.findall("testcase[@classname='order_saga']")]
    assert boundary_cases == [
        "lease.acquired",
        "charge:effect.prepared",
        "charge:transport.response_received",
    ]


def test_a_violating_boundary_fails_with_checker_evidence_and_replay(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    root = _parse(campaign, tmp_path)
    case = root.find(".//testcase[@name='charge:transport.response_received']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    assert "single_effect" in failure.get("message", "")
    assert "journal #2: payments.create_charge" in (failure.text or "")
    assert "killpoint replay killpoint-out/schedules/order_saga-r7.json" in (failure.text or "")
    assert root.find(".//testcase[@name='lease.acquired']/failure") is None


def test_non_boundary_runs_are_grouped_by_kind(campaign: CampaignResult, tmp_path: Path) -> None:
    root = _parse(campaign, tmp_path)
    assert root.find(".//testcase[@classname='order_saga.network']") is not None
    assert root.find(".//testcase[@classname='order_saga.clean']") is not None
    generated = root.findall(".//testcase[@classname='research_publish.generated']")
    assert len(generated) == 1  # all generated runs of a scenario in one case


def test_an_undecided_run_is_skipped_not_passed(campaign: CampaignResult, tmp_path: Path) -> None:
    root = _parse(campaign, tmp_path)
    skipped = root.find(".//testcase[@classname='research_publish.generated']/skipped")
    assert skipped is not None and "budget ran out" in skipped.get("message", "")


def test_a_surviving_mutant_fails_in_the_mutant_suite(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    root = _parse(campaign, tmp_path)
    suite = root.find(f"testsuite[@name='{MUTANT_SUITE}']")
    assert suite is not None
    failed = [c.get("name") for c in suite.findall("testcase") if c.find("failure") is not None]
    assert failed == ["stale_approval"]


def test_suite_and_root_counts_add_up(campaign: CampaignResult, tmp_path: Path) -> None:
    root = _parse(campaign, tmp_path)
    suites = root.findall("testsuite")
    for suite in suites:
        assert int(suite.get("tests", "-1")) == len(suite.findall("testcase"))
    assert int(root.get("tests", "0")) == sum(len(s.findall("testcase")) for s in suites) == 11
    assert (root.get("failures"), root.get("skipped"), root.get("errors")) == ("2", "1", "0")


def test_an_empty_campaign_is_valid_junit(empty: CampaignResult, tmp_path: Path) -> None:
    root = _parse(empty, tmp_path)
    assert root.tag == "testsuites" and root.get("tests") == "0"


def test_a_double_crash_is_filed_under_its_first_boundary(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    bad = campaign.violations[0]
    first = next(r for r in campaign.runs if r.run_id == "r1")  # crashed at lease.acquired
    double = bad.model_copy(
        update={
            "run_id": "d1",
            "kind": "double",
            "crashed_at": [first.crashed_at[0], "w1 charge:effect.prepared"],
        }
    )
    root = _parse(campaign.model_copy(update={"runs": [*campaign.runs, double]}), tmp_path)
    saga = root.find("testsuite[@name='order_saga']")
    assert saga is not None
    names = [c.get("name") for c in saga.findall("testcase[@classname='order_saga']")]
    assert names.count("lease.acquired") == 1 and "w1 charge:effect.prepared" not in names
    case = saga.find("testcase[@name='lease.acquired']")
    assert case is not None and case.find("failure") is not None
    assert "d1" in (case.findtext("system-out") or "")


def test_a_caught_mutant_passes_with_the_run_that_caught_it(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    root = _parse(campaign, tmp_path)
    case = root.find(f"testsuite[@name='{MUTANT_SUITE}']/testcase[@name='no_ledger']")
    assert case is not None and case.find("failure") is None
    out = case.findtext("system-out") or ""
    assert "caught by single_effect after 4 runs" in out
    assert "[single_effect] payments charged order-r7 twice" in out
    replay = "killpoint replay killpoint-out/mutants/no_ledger/schedules/order_saga-r7.json"
    assert f"replay: {replay} --engine mutant:no_ledger" in out


def test_a_broken_engine_caught_as_expected_passes_in_a_suite_of_its_own(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    root = _parse(with_a_catch_as_expected(campaign), tmp_path)
    suite = root.find(f"testsuite[@name='{EXPECTED_SUITE}']")
    assert suite is not None and suite.get("failures") == "0"
    [case] = suite.findall("testcase")
    assert case.get("name") == EXPECTING_TEST and case.find("failure") is None
    out = case.findtext("system-out") or ""
    assert "engine mutant:no_ledger over order_saga, 1 of 2 runs violating (single_effect 1)" in out
    assert root.get("failures") == "2"  # the campaign's own: the violation, the escaped mutant
