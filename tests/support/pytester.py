"""A pytest session of its own, in a subprocess, as a team's project runs the plugin."""

from __future__ import annotations

import os

import pytest

POSTGRES = "KILLPOINT_TEST_POSTGRES_URL"  # the project's own test server, not a plugin setting


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sessions under test see only the settings each test gives them."""
    for name in list(os.environ):
        if name.startswith("KILLPOINT_") and name not in ("KILLPOINT_CHECKPOINT_KEY", POSTGRES):
            monkeypatch.delenv(name)
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    # Only the plugins a test names: faster sessions, and proof that `-p killpoint` suffices.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """A pytest session in this process with the killpoint plugin, as a user's would have it."""
    return pytester.runpytest("-p", "killpoint", *args)
