"""A failing killpoint test: checker, evidence, and replay commands that each work as printed —
`pytest NODEID --killpoint-replay=FILE` always, `killpoint replay FILE` when the schedule names
its engine and its scenario is the installed catalogue's own."""

from __future__ import annotations

import re
import shlex

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app
from tests.support.fixtures import TEST_KEY
from tests.support.pytester import clean_environment, run

pytest_plugins = ["pytester"]
__all__ = ["clean_environment"]  # the sessions under test see only what each test gives them

BROKEN_ENGINE = """
from killpoint.scenarios.mutants import MUTANTS

# An engine that makes a fresh idempotency key on every resume: a retried charge is a new charge.
ENGINE = MUTANTS["fresh_idempotency_key_on_resume"]
"""

# The cheapest campaign that still catches the broken engine: single crashes of order_saga.
SAGA = 'scenario="order_saga", double=False, network=False, named=False, interleave=False'


def test_broken_engine_fails_with_checker_evidence_and_replay_commands(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(broken=BROKEN_ENGINE)
    pytester.makepyfile(
        test_saga=f"""
        import pytest

        @pytest.mark.killpoint({SAGA}, engine="broken:ENGINE")
        def test_saga_under_broken_engine():
            pass

        @pytest.mark.killpoint({SAGA}, fail_on_violation=False)
        def test_the_oracle_catches_it(killpoint_campaign):
            result = killpoint_campaign(engine="broken:ENGINE")
            assert result.violations
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*killpoint: * of * runs of order_saga violate the oracle (engine *",
            "*✗ order_saga *",
            "*[single_effect]*",
            "*replay: pytest test_saga.py::test_saga_under_broken_engine --killpoint-replay=*",
            "*replay: killpoint replay *.json",
        ]
    )
    # the second command works alone: the schedule names the engine, the scenario is installed
    command = re.search(r"replay: killpoint (replay \S+\.json)", result.stdout.str())
    assert command is not None
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(pytester.path)
        replayed = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY}).invoke(
            app, shlex.split(command.group(1))
        )
    assert replayed.exit_code == 1 and re.search(r"single_effect +VIOLATION", replayed.stdout)
    schedule = re.search(r"--killpoint-replay=(\S+\.json)", result.stdout.str())
    assert schedule is not None
    replay = run(
        pytester,
        "test_saga.py::test_saga_under_broken_engine",
        f"--killpoint-replay={schedule.group(1)}",
    )
    replay.assert_outcomes(failed=1)
    replay.stdout.fnmatch_lines(["*killpoint: 1 of 1 runs of order_saga violate*"])


def test_a_scenario_outside_the_catalogue_is_replayed_through_its_test_alone(
    pytester: pytest.Pytester,
) -> None:
    """A team's own scenario object — here a copy of order_saga under the same name — is not
    the one `killpoint replay` would find by name: only the pytest command is printed."""
    pytester.makepyfile(broken=BROKEN_ENGINE)
    pytester.makepyfile(
        test_own=f"""
        import dataclasses
        import pytest
        from killpoint import scenarios

        OURS = dataclasses.replace(scenarios.get("order_saga"), description="our own saga")

        @pytest.mark.killpoint(OURS, {SAGA.partition(", ")[2]}, engine="broken:ENGINE")
        def test_ours(): pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*replay: pytest test_own.py::test_ours --killpoint-replay=*"])
    assert "killpoint replay" not in result.stdout.str()
