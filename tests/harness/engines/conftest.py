"""The frameworks' fixtures."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest


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
