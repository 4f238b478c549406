"""killpoint's pytest plugin: options and fixtures, loaded without importing the engine.

Registered through the `pytest11` entry point, so it loads in every pytest run of a project
that installs killpoint; it must stay cheap until a fixture is actually used.
"""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("killpoint", "killpoint crash campaigns")
    group.addoption(
        "--killpoint-db",
        default=None,
        help="database URL of the store under test (default: $KILLPOINT_DATABASE_URL, "
        "else a SQLite file in the test's temporary folder)",
    )


@pytest.fixture
def killpoint_store_url(request: pytest.FixtureRequest, tmp_path: object) -> str:
    """The store URL a test should use: the option, the environment, or a fresh SQLite file."""
    chosen = request.config.getoption("--killpoint-db") or os.environ.get("KILLPOINT_DATABASE_URL")
    return str(chosen) if chosen else f"sqlite:///{tmp_path}/killpoint.sqlite"
