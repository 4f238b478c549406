"""The pytest plugin at work in real pytest sessions (pytester): options, header, fixtures,
the marker on a catalogue scenario and on a team's own scenario, the session report (written
once, by the xdist controller), and a plugin that loads without the engine. Its options are
pinned in test_pytest_options.py, its failures and their replay commands in
test_pytest_replay.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.pytester import run

pytest_plugins = ["pytester"]

# What the plugin may load with pytest: the standard library, and these light modules of ours.
LIGHT = {
    "killpoint",
    "killpoint.harness",
    "killpoint.harness.options",
    "killpoint.harness.pytest_plugin",
    "killpoint.harness.pytest_plugin._settings",
}
HEAVY = ("sqlalchemy", "pydantic", "httpx", "typer", "rich")
PLUGIN_FILE = Path(__file__).parents[3] / "harness" / "pytest_plugin" / "__init__.py"

OWN_SCENARIO = """
import pytest
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.scenarios import ExpectedEffect, Scenario, adapters_for
from killpoint.fake_services.mailer import message_key


def make_input(run_id):
    return {"to": f"new-user-{run_id}@example.test", "subject": "Welcome"}


def send(ctx):
    args = {"to": ctx.input["to"], "subject": ctx.input["subject"], "body": "Hello"}
    return [EffectIntent(operation="send", service="mailer", args=args, high_impact=True)]


WELCOME = Scenario(
    name="welcome_mail",
    description="our own sign-up workflow: one welcome e-mail",
    workflow=Workflow(
        name="welcome_mail",
        plan_version="welcome@1",
        states=("signed_up", "welcomed", "checked"),
        initial="signed_up",
        terminal={"checked": RunStatus.COMPLETED},
        transitions=(
            Transition("signed_up", "welcomed",
                       Step("send", StepKind.EFFECT, intents=send, service="mailer")),
            Transition("welcomed", "checked",
                       Step("check", StepKind.VERIFY, service="mailer", target_step="send")),
        ),
    ),
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=lambda inp: (
        ExpectedEffect("mailer", message_key(inp["to"], inp["subject"]), irreversible=True,
                       verifiable=False),
    ),
)


@pytest.mark.killpoint(WELCOME, double=False, interleave=False)
def test_welcome_mail_survives_crashes(killpoint_result):
    assert [c.scenario for c in killpoint_result.scenarios] == ["welcome_mail"]
    assert killpoint_result.scenarios[0].boundaries_crashed
"""


def run_alone(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """`run` in a process of its own: one copy of each of our modules, as a user's session has
    (in this process, pytester drops the modules an inner session imported, and the next one
    would mix the new copies with the ones this process holds)."""
    return pytester.runpytest_subprocess("-p", "killpoint", *args)


def test_fixtures_give_a_store_services_world_and_killswitch(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from killpoint import scenarios
        from killpoint.reference.store import Store
        from killpoint.harness.engines.reference import REFERENCE
        from killpoint.harness.run.killswitch import Killed
        from killpoint.harness.run.runner import run_schedule
        from killpoint.harness.schedule import FaultSchedule, HitPoint

        def test_store_is_a_sqlite_file_of_this_test(killpoint_store, tmp_path):
            assert isinstance(killpoint_store, Store)
            assert killpoint_store.url.startswith(f"sqlite:///{tmp_path}")

        def test_services_answer_in_process(killpoint_services):
            with killpoint_services.client() as http:
                assert http.get("/mailer/messages", params={"to": "x@example.test"}).status_code
            assert killpoint_services.journal.last_seq() >= 0

        def test_world_runs_a_schedule_and_the_switch_kills_at_its_point(
            killpoint_world, killpoint_killswitch
        ):
            email = scenarios.get("email")
            schedule = FaultSchedule(scenario="email", run_id="c")
            clean = run_schedule(killpoint_world, email, schedule, REFERENCE)
            assert clean.final_status == "completed"
            point = HitPoint(worker=0, step="notify", boundary="effect.prepared")
            switch = killpoint_killswitch(FaultSchedule(scenario="email", run_id="k",
                                                        crashes=(point,)))
            switch("step.begin", "notify")
            with pytest.raises(Killed):
                switch("effect.prepared", "notify")
            assert [h.boundary for h in killpoint_killswitch.hits] == [
                "step.begin", "effect.prepared"]
        """
    )
    run(pytester).assert_outcomes(passed=3)


def test_marker_on_a_catalogue_scenario_passes_and_runs_without_asking(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.killpoint(scenario="email", double=False, interleave=False)
        def test_email_result(killpoint_result):
            assert not killpoint_result.violations
            assert len(killpoint_result.runs) > 5

        @pytest.mark.killpoint("email", double=False, network=False, interleave=False)
        def test_email_without_fixture():
            pass

        @pytest.mark.killpoint(double=False, network=False, named=False, deploys=False,
                               interleave=False, real_pass=False, explore="0")
        def test_marker_configures_the_fixture(killpoint_campaign):
            result = killpoint_campaign("email")
            assert {r.kind for r in result.runs} == {"clean", "single"}
            assert killpoint_campaign.result is result
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*killpoint*", "3 campaigns, * runs, 0 violating"])


def test_a_wrong_marker_fails_its_test_with_what_it_takes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.killpoint("email", doubles=False)
        def test_typo(): pass

        def test_no_scenario(killpoint_campaign):
            killpoint_campaign()
        """
    )
    result = run(pytester)
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.killpoint got unknown arguments *doubles*; it takes *double_limit*",
            "*killpoint_campaign needs a scenario*",
        ]
    )


def test_marker_runs_a_teams_own_scenario(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(OWN_SCENARIO)
    run(pytester).assert_outcomes(passed=1)


def test_session_report_and_junit_are_written_side_by_side(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.killpoint("email", double=False, network=False, interleave=False)
        def test_email(): pass

        @pytest.mark.killpoint("batch", double=False, network=False, named=False, interleave=False)
        def test_batch(): pass

        @pytest.mark.killpoint("email", double=False, interleave=False)
        def test_email_again(): pass
        """
    )
    result = run(pytester, "--killpoint-report=out/report.html", "--killpoint-junit=j.xml")
    result.assert_outcomes(passed=3)
    report = (pytester.path / "out" / "report.html").read_text()
    assert "email" in report and "batch" in report
    assert (pytester.path / "out" / "report-2.html").exists()  # email twice: its own report
    assert "batch" not in (pytester.path / "out" / "report-2.html").read_text()
    assert "<testsuite" in (pytester.path / "j.xml").read_text()
    result.stdout.fnmatch_lines(["report: *report.html", "junit: *j.xml"])


# The documented way to show that the oracle catches a broken engine; email's single crashes
# are enough to catch one that keeps no ledger.
CATCHES_A_BROKEN_ENGINE = """
import pytest

CHEAP = dict(double=False, network=False, named=False, interleave=False, explore="0")


@pytest.mark.killpoint("email", **CHEAP)
def test_email(): pass


@pytest.mark.killpoint("email", fail_on_violation=False, **CHEAP)
def test_the_oracle_catches_it(killpoint_campaign):
    result = killpoint_campaign(engine="mutant:only_conversation_saved")
    assert result.violations
"""


def test_a_broken_engine_caught_as_expected_leaves_the_session_green(
    pytester: pytest.Pytester,
) -> None:
    """Its violations are in a section of their own, in the page, the JUnit file and the
    terminal summary, and in none of the session's counts."""
    pytester.makepyfile(test_oracle=CATCHES_A_BROKEN_ENGINE)
    result = run_alone(pytester, "--killpoint-report=report.html", "--killpoint-junit=j.xml")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "1 campaign, * runs, 0 violating",
            "caught as expected (fail_on_violation=False, the test passed; *): 1 campaign",
            "  test_oracle.py::test_the_oracle_catches_it: engine only_conversation_saved, "
            "* of * runs violating",
        ]
    )
    page = (pytester.path / "report.html").read_text()
    assert re.search(r'<span class="badge (pass|unknown)">', page)  # not FAIL
    assert re.search(r'id="tile-violations" data-state="good">\s*<div class="tile-value">0<', page)
    expected = page[page.index('<section id="expected"') :]
    assert "test_oracle.py::test_the_oracle_catches_it" in expected
    assert "only_conversation_saved" in expected and 'class="timeline"' in expected
    junit = ET.parse(pytester.path / "j.xml").getroot()
    assert junit.get("failures") == "0"
    [case] = junit.findall("testsuite[@name='killpoint.caught_as_expected']/testcase")
    assert case.get("name") == "test_oracle.py::test_the_oracle_catches_it"


def test_violations_a_failed_test_did_not_enforce_are_still_the_session_s(
    pytester: pytest.Pytester,
) -> None:
    """A test that failed says nothing was as it expected: its campaign is no catch."""
    pytester.makepyfile(
        test_oracle=CATCHES_A_BROKEN_ENGINE.replace("assert result.violations", "assert 0")
    )
    result = run_alone(pytester, "--killpoint-report=report.html")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["2 campaigns, * runs, [1-9]* violating"])
    pages = [(pytester.path / name).read_text() for name in ("report.html", "report-2.html")]
    assert ['<span class="badge fail">' in page for page in pages] == [False, True]  # the broken
    assert not any('id="expected"' in page for page in pages)  # engine's own report is red


def test_under_xdist_only_the_controller_writes_the_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # when this suite itself runs under xdist, its worker's name must not leak into the inner run
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(
        """
        import os
        from killpoint import reports
        _write = reports.write_html

        def write_html(result, path):
            with open("writers.log", "a") as log:
                log.write(os.environ.get("PYTEST_XDIST_WORKER", "controller") + "\\n")
            return _write(result, path)

        reports.write_html = write_html
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.killpoint("email", double=False, network=False, interleave=False)
        def test_email(): pass

        @pytest.mark.killpoint("batch", double=False, network=False, named=False, interleave=False)
        def test_batch(): pass
        """
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "killpoint",
        "-p",
        "xdist",
        "-n",
        "2",
        "--killpoint-report=report.html",
        "--killpoint-seed=random",
    )
    result.assert_outcomes(passed=2)
    assert (pytester.path / "writers.log").read_text().split() == ["controller"]
    report = (pytester.path / "report.html").read_text()
    assert "email" in report and "batch" in report
    result.stdout.fnmatch_lines(["2 campaigns, * runs, 0 violating"])


def test_docker_asked_but_unreachable_skips_with_the_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Docker engine is pointed at a socket nobody serves, so the test runs (and says the
    same) whether or not this machine has a Docker engine."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{pytester.path / 'no-docker.sock'}")
    pytester.makepyfile("def test_store(killpoint_store): pass")
    result = run(pytester, "--killpoint-db=docker", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            "killpoint: *store docker unreachable (*): killpoint tests skip",
            "*--killpoint-db=docker: no Docker engine answers*",
        ]
    )


@pytest.mark.postgres
def test_parallel_campaigns_on_one_postgres_never_meet(pytester: pytest.Pytester) -> None:
    from tests.support.fixtures import check_reachable, server_url

    url = server_url()
    check_reachable(url)
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.killpoint("email", double=False, network=False, interleave=False)
        def test_first(killpoint_store_url):
            assert "search_path" in killpoint_store_url

        @pytest.mark.killpoint("email", double=False, network=False, interleave=False)
        def test_second(): pass
        """
    )
    run(pytester, f"--killpoint-db={url}").assert_outcomes(passed=2)


def _imported_by(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(out.stdout.splitlines()[-1])
    ours = [m for m in loaded if m.split(".")[0] == "killpoint" and m not in LIGHT]
    return ours + [m for m in loaded if m.split(".")[0] in HEAVY]


def test_plugin_module_imports_only_pytest_and_the_standard_library() -> None:
    load = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('kp_plugin', {str(PLUGIN_FILE)!r})\n"
        "module = sys.modules['kp_plugin'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)"
    )
    assert _imported_by(load) == []


def test_loading_the_plugin_entry_point_imports_no_engine() -> None:
    assert _imported_by("import killpoint.harness.pytest_plugin") == []
