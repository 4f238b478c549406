"""What the shared fixtures of `tests/conftest.py` hand the tests: the key, the store's type, a
worker's factory, and the PostgreSQL URL (skipped with a reason outside CI, a failure under it)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from killpoint.contract.boundaries import BoundaryHook
from killpoint.reference.dispatcher import Engine
from killpoint.reference.store import Store
from tests.support.needs import missing

POSTGRES_ENV = "KILLPOINT_TEST_POSTGRES_URL"
TEST_KEY = "test-checkpoint-key-0123456789abcdef"
# The campaign tests that cost most run a slice of the catalogue (or of their cases) in `ci`, all
# of it under `thorough`.
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"

OpenStore = Callable[[], Store]


class NewWorker(Protocol):
    def __call__(self, hook: BoundaryHook | None = None, **kwargs: Any) -> Engine: ...


def server_url() -> str:
    """The PostgreSQL URL for this test, or skip/fail with a one-line reason."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        missing(
            f"{POSTGRES_ENV} is unset; set it (e.g. "
            "postgresql+psycopg://postgres@127.0.0.1:5432/test) to run the PostgreSQL half"
        )
    return url


_reachable: dict[str, str | None] = {}


def check_reachable(url: str) -> None:
    """Connect once per session; a set but unreachable server is a failure, never a skip."""
    if url not in _reachable:
        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            _reachable[url] = None
        except OperationalError as exc:
            _reachable[url] = str(exc).splitlines()[0]
        finally:
            engine.dispose()
    problem = _reachable[url]
    if problem is not None:
        pytest.fail(f"{POSTGRES_ENV}={url} is set but PostgreSQL is unreachable: {problem}")
