"""The smallest real campaigns the CLI tests run (a second or so each), and how they run them."""

from __future__ import annotations

from typer.testing import CliRunner

from killpoint.harness.cli import app
from tests.support.fixtures import TEST_KEY

ENV = {"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None}
# each boundary crashed once, no other phase
SMALL = [
    "run", "--no-double", "--no-interleave", "--no-network", "--no-deploys", "--no-named",
    "--no-real-pass", "--explore", "0", "-q",
]  # fmt: skip
# a mutant the plan catches: it charges again on resume (two violating runs)
CAUGHT = [*SMALL, "-s", "order_saga", "--engine", "mutant:fresh_idempotency_key_on_resume"]
PASSING = [*SMALL, "-s", "email"]


def cli(*args: str) -> tuple[int, str, str]:
    """`killpoint ARGS…` in this process: exit status, stdout, stderr."""
    result = CliRunner(env=ENV).invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr
