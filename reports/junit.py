"""JUnit XML for CI systems: one test case per crashed boundary, so failures show up natively.

CI servers (GitLab, Jenkins, GitHub test reporters) already know how to list, count and diff
JUnit test cases. A campaign maps onto them as one suite per scenario with one case per
(scenario, boundary label) crashed — the boundary is the unit a developer fixes — plus one case
per clean, network, named or replay run, and one case per scenario for all its generated runs
(Hypothesis may make hundreds). Mutants get their own suite: a mutant the oracle missed fails,
a caught one passes with the run that caught it. A broken engine a test caught as expected
(`fail_on_violation=False`) passes in a suite of its own. A run the oracle could not judge
(`unknown`) is reported as skipped, never as passed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from killpoint.harness.results import CampaignResult, ExpectedCatch, MutantResult, RunResult
from killpoint.reports._atomic import write_atomic
from killpoint.reports.embedded import replay_for

BOUNDARY_KINDS = ("single", "double")
_WORKER_PREFIX = re.compile(r"^w\d+ ")


def boundary_of(run: RunResult) -> str | None:
    """The boundary a crash run is filed under: its first crash, without the worker prefix.

    A double crash (die at X, then die again during the recovery) is filed under X: it tests
    recovery from X.
    """
    if run.kind not in BOUNDARY_KINDS or not run.crashed_at:
        return None
    return _WORKER_PREFIX.sub("", run.crashed_at[0])


MUTANT_SUITE = "killpoint.mutants"
EXPECTED_SUITE = "killpoint.caught_as_expected"


def _message(run: RunResult, name_engine: bool = False) -> tuple[str, str]:
    """(short message, full text) of a violating run: checkers, evidence, replay command."""
    failed = [v for v in run.verdicts if v.valid is False]
    message = "; ".join(f"{v.checker}: {v.summary}" for v in failed) or "violation"
    lines = [f"run {run.run_id} ({run.label}): {run.schedule.describe()}"]
    for verdict in failed:
        lines.append(f"[{verdict.checker}] {verdict.summary}")
        lines += [f"  {line}" for line in verdict.evidence]
    saved = run.schedule_file  # the campaign's file: JUnit is read beside the campaign
    replay = None if saved is None else replay_for(run, name_engine, saved)
    if replay is not None:
        lines.append(f"replay: {replay}")
    elif run.schedule_file:
        lines.append(
            f"schedule: {run.schedule_file} (it names no engine: replay it through its test)"
        )
    return message, "\n".join(lines)


def _case(
    suite: ET.Element, classname: str, name: str, runs: Iterable[RunResult], time_s: float = 0.0
) -> ET.Element:
    runs = list(runs)
    case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{time_s:.3f}")
    bad = [r for r in runs if r.valid is False]
    unsure = [r for r in runs if r.valid == "unknown"]
    if bad:
        texts = [_message(r) for r in bad]
        failure = ET.SubElement(
            case, "failure", type="violation", message=" | ".join(m for m, _ in texts)
        )
        failure.text = "\n\n".join(t for _, t in texts)
    elif unsure:
        reasons = {
            v.summary or v.checker for r in unsure for v in r.verdicts if v.valid == "unknown"
        }
        ET.SubElement(
            case, "skipped", message="oracle could not decide: " + "; ".join(sorted(reasons))
        )
    if runs:
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(
            f"{r.run_id} {r.kind} {r.label}: {r.final_status}/{r.final_state} valid={r.valid}"
            for r in runs
        )
    return case


def _scenario_suite(root: ET.Element, result: CampaignResult, scenario: str) -> None:
    suite = ET.SubElement(root, "testsuite", name=scenario)
    runs = [r for r in result.runs if r.scenario == scenario]
    coverage = next((s for s in result.scenarios if s.scenario == scenario), None)
    labels = list(coverage.boundaries_crashed) if coverage else []
    for run in runs:
        label = boundary_of(run)
        if label is not None and label not in labels:
            labels.append(label)
    for label in labels:
        at = [r for r in runs if boundary_of(r) == label]
        case = _case(suite, scenario, label, at, sum(r.measures.recovery_wall_s for r in at))
        outcome = coverage.outcome_by_boundary.get(label) if coverage else None
        if not at and outcome == "violation":
            ET.SubElement(
                case,
                "failure",
                type="violation",
                message="violation recorded for this boundary (run not kept)",
            )
    for run in runs:
        if run.kind not in BOUNDARY_KINDS and run.kind != "generated":
            _case(suite, f"{scenario}.{run.kind}", run.label, [run], run.measures.recovery_wall_s)
    generated = [r for r in runs if r.kind == "generated"]
    if generated:
        _case(suite, f"{scenario}.generated", f"generated schedules ({len(generated)})", generated)
    _count(suite)


def _mutant_suite(root: ET.Element, mutants: list[MutantResult]) -> None:
    suite = ET.SubElement(root, "testsuite", name=MUTANT_SUITE)
    for mutant in mutants:
        case = ET.SubElement(
            suite, "testcase", classname=MUTANT_SUITE, name=mutant.mutant, time="0.000"
        )
        if not mutant.caught:
            ET.SubElement(
                case,
                "failure",
                type="mutant-survived",
                message=f"the oracle did not catch {mutant.mutant}: "
                f"{mutant.description or 'no checker failed'}",
            )
        else:
            out = ET.SubElement(case, "system-out")
            schedule = mutant.schedule.describe() if mutant.schedule else "-"
            out.text = (
                f"caught by {mutant.checker} after {mutant.runs_to_detection} runs; "
                f"schedule: {schedule}"
            )
            if mutant.run is not None:
                out.text += "\n" + _message(mutant.run, name_engine=True)[1]
    _count(suite)


def _expected_suite(root: ET.Element, catches: list[ExpectedCatch]) -> None:
    """One passing case per test that caught a broken engine as it expected."""
    suite = ET.SubElement(root, "testsuite", name=EXPECTED_SUITE)
    for catch in catches:
        case = ET.SubElement(suite, "testcase", classname=EXPECTED_SUITE, name=catch.test)
        case.set("time", "0.000")
        checkers = ", ".join(f"{name} {n}" for name, n in catch.checkers.items())
        out = ET.SubElement(case, "system-out")
        out.text = (
            f"caught as expected (fail_on_violation=False): engine {catch.engine} over "
            f"{', '.join(catch.scenarios)}, {catch.violating} of {catch.runs} runs violating "
            f"({checkers}); the first:\n" + _message(catch.first, name_engine=True)[1]
        )
    _count(suite)


def _count(suite: ET.Element) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    suite.set("errors", "0")
    suite.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))
    suite.set("time", f"{sum(float(c.get('time', '0')) for c in cases):.3f}")


def junit_tree(result: CampaignResult) -> ET.ElementTree[ET.Element]:
    root = ET.Element("testsuites", name=f"killpoint {result.engine}")
    names = [s.scenario for s in result.scenarios]
    names += sorted({r.scenario for r in result.runs} - set(names))
    for name in names:
        _scenario_suite(root, result, name)
    if result.mutants:
        _mutant_suite(root, result.mutants)
    if result.caught_as_expected:
        _expected_suite(root, result.caught_as_expected)
    suites = root.findall("testsuite")
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in suites)))
    root.set("time", f"{result.duration_s:.3f}")
    return ET.ElementTree(root)


def junit_xml(result: CampaignResult) -> bytes:
    tree = junit_tree(result)
    ET.indent(tree)
    data: bytes = ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True)
    return data


def write_junit(result: CampaignResult, path: str | Path) -> Path:
    """Build the whole document in memory, then replace `path` in one step."""
    return write_atomic(path, junit_xml(result))
