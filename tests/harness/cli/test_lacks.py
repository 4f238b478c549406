"""An engine says what it does not keep, and the campaign says it on every front: the console,
the JSON summary and the report, so an `unknown` is read as "not kept", not as "not checked"."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.protocol import EngineSpec
from tests.support.fixtures import TEST_KEY
from tests.support.quiet import Quiet

LACKING = EngineSpec(
    name="quiet",
    factory=Quiet,
    lacks=frozenset({"ledger", "budget"}),
    ref="tests.harness.cli.test_lacks:LACKING",
)
SMALL = ["--scenario", "email", "--no-double", "--no-interleave", "--no-network", "--explore", "0"]


def _run(tmp_path: Path, *more: str) -> str:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})
    args = ["run", "--engine", LACKING.ref or "", *SMALL, "--workdir", str(tmp_path), *more]
    return runner.invoke(app, args).stdout


def test_what_an_engine_does_not_keep_is_said_on_the_console_and_in_the_report(
    tmp_path: Path,
) -> None:
    report = tmp_path / "report.html"
    out = _run(tmp_path, "--report", str(report))
    assert "quiet keeps no budget, ledger: the checks that need them answer unknown" in out
    assert '<dd class="lacks"' in report.read_text() and "budget, ledger" in report.read_text()
    summary = json.loads(_run(tmp_path, "--json"))
    assert summary["lacks"] == ["budget", "ledger"]
