"""What the frameworks' tests share."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest

from killpoint.harness.results import RunResult

# The named case every keyed variant fails: down two days, it ships a day past its time budget,
# which no framework keeps across restarts (`lacks` "budget"). A finding, pinned by
# `test_findings.py`; the other runs of a keyed campaign are judged without it.
NO_TIME_BUDGET = "case-time-budget-passes-during-downtime"


def beside_the_time_finding(runs: list[RunResult]) -> list[RunResult]:
    """A campaign's runs but the named case of the time finding (`NO_TIME_BUDGET`)."""
    return [r for r in runs if r.run_id != NO_TIME_BUDGET]


@pytest.fixture
def dbos_logs_to_real_stderr() -> Iterator[None]:
    """DBOS binds its console log handler to `sys.stderr` at its first launch; under typer's
    CliRunner that is a captured stream, closed after the call, and the next launch in this
    process would write to it. A handler on the real stderr, made first, is the one it keeps."""
    logger = logging.getLogger("dbos")
    handler = logging.StreamHandler(sys.__stderr__)
    handler.name = "__dbos_console_log_handler__"
    kept = logger.handlers[:]
    logger.handlers = [handler]
    yield
    logger.handlers = kept
