"""No silent skips in CI: a test that needs a server, a browser, a program or an extra says so
through `tests/support/needs.py`, which skips outside CI and fails under it (`.ci/run` sets
`CI` and installs every need, so a missing one there is a broken machine, never a smaller
suite). Each case runs a small pytest session in a subprocess, once under `CI` and once not."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
DEAD_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:1/test"  # port 1: nothing listens

NEEDS_CHROMIUM = """
from tests.support.needs import needs_program

def test_the_report_in_a_browser():
    needs_program("chromium", "the report is checked in it")
"""

NEEDS_AN_EXTRA = """
from tests.support.needs import needs_module

needs_module("killpoint_no_such_extra", "the imaginary extra is not installed")

def test_the_extra():
    pass
"""


def _session(
    tmp_path: Path, ci: bool, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`pytest -rA` in a subprocess, from the repository (so `tests.support` imports), with `CI`
    set or removed, PATH holding only an empty folder (no chromium, node or go there), and no
    plugin but pytest's own (a quicker session: a need is the suite's, not a plugin's)."""
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_XDIST_WORKER")}
    environ |= {"PATH": str(empty), "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    if ci:
        environ["CI"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=ROOT,
        env=environ | (env or {}),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _own_file(tmp_path: Path, source: str) -> str:
    path = tmp_path / "test_a_need.py"
    path.write_text(source)
    return str(path)


def test_a_missing_browser_fails_under_ci_with_the_reason(tmp_path: Path) -> None:
    done = _session(tmp_path, True, _own_file(tmp_path, NEEDS_CHROMIUM))
    assert done.returncode == 1, done.stdout
    assert re.search(r"1 failed", done.stdout), done.stdout
    assert "CI is set and a test's need is missing: chromium is not on PATH" in done.stdout


def test_a_missing_browser_skips_outside_ci_saying_why(tmp_path: Path) -> None:
    done = _session(tmp_path, False, _own_file(tmp_path, NEEDS_CHROMIUM))
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout
    assert "chromium is not on PATH: the report is checked in it" in done.stdout


def test_a_missing_extra_fails_the_run_under_ci_with_the_reason(tmp_path: Path) -> None:
    done = _session(tmp_path, True, _own_file(tmp_path, NEEDS_AN_EXTRA))
    assert done.returncode != 0, done.stdout
    assert "1 error" in done.stdout and "passed" not in done.stdout
    assert "the imaginary extra is not installed" in done.stdout


def test_a_missing_extra_skips_its_module_outside_ci(tmp_path: Path) -> None:
    done = _session(tmp_path, False, _own_file(tmp_path, NEEDS_AN_EXTRA))
    assert done.returncode == 5, done.stdout  # nothing ran: the module was skipped whole
    assert "1 skipped" in done.stdout
    assert "the imaginary extra is not installed" in done.stdout


@pytest.mark.parametrize("ci", [True, False], ids=["under-ci", "outside-ci"])
def test_the_dbos_tests_without_postgres_fail_under_ci_and_skip_outside(
    tmp_path: Path, ci: bool
) -> None:
    """The suite's own DBOS module, its server pointed at a port where nothing listens: the
    case issue 26 found skipping under CI."""
    done = _session(
        tmp_path,
        ci,
        "tests/harness/engines/test_dbos.py",
        "-k",
        "unknown_variant",
        env={"KILLPOINT_DBOS_URL": DEAD_POSTGRES},
    )
    assert f"DBOS needs PostgreSQL at {DEAD_POSTGRES}" in done.stdout, done.stdout
    assert ("1 error" in done.stdout) is ci and ("1 skipped" in done.stdout) is not ci


def _skipping_calls(path: Path) -> list[str]:
    pattern = re.compile(r"pytest\.(skip|importorskip)\(|mark\.skipif\b|mark\.skip\b")
    lines = path.read_text().splitlines()
    return [
        f"{path.relative_to(ROOT)}:{n}" for n, line in enumerate(lines, 1) if pattern.search(line)
    ]


def test_every_skip_of_the_suite_goes_through_its_needs() -> None:
    """A bare `pytest.skip` or `importorskip` would skip under CI too: the suite's only way to
    skip is `tests/support/needs.py` (this file names the calls, and is left out)."""
    own = {ROOT / "tests" / "support" / "needs.py", Path(__file__)}
    found = [
        call
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path not in own
        for call in _skipping_calls(path)
    ]
    assert found == []
