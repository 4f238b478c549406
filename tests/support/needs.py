"""What a test needs from the machine (a server, a browser, a program, an extra) and what a
missing need does: outside CI the test skips, saying why; under CI (`.ci/run` sets `CI`) the run
fails, saying why. CI installs every need, so there a missing one is a broken machine, and a
skip would shrink the suite without anyone noticing.

Each helper may be called at a module's top (before the imports it guards, as
`pytest.importorskip` is) or inside a fixture or a test."""

from __future__ import annotations

import importlib
import os
import shutil
from importlib import metadata
from types import ModuleType
from typing import NoReturn

import pytest

CI_ENV = "CI"


def under_ci() -> bool:
    return bool(os.environ.get(CI_ENV))


def missing(reason: str) -> NoReturn:
    """Skip with the reason, or, under CI, fail with it."""
    if under_ci():
        pytest.fail(f"{CI_ENV} is set and a test's need is missing: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def needs(met: bool, reason: str) -> None:
    """Go on when `met`; otherwise the need is missing, for `reason`."""
    if not met:
        missing(reason)


def needs_module(name: str, reason: str) -> ModuleType:
    """The imported module (an extra's, a test tool's), or a missing need saying why not."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{reason} ({exc})")


def needs_distribution(name: str, reason: str) -> None:
    """An installed distribution that is not imported (a wheel that only ships a binary)."""
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        missing(reason)


def needs_program(name: str, reason: str) -> str:
    """The program's path on PATH, or a missing need saying why it is wanted."""
    found = shutil.which(name)
    if found is None:
        missing(f"{name} is not on PATH: {reason}")
    return found
