"""How many inputs the fuzz tests tried: each fuzz test calls `tried()` once per input, and the
session ends with one line that sums them (tests/conftest.py), so a run shows what it covered.

A test's count travels on its report (`user_properties`), which xdist sends from the workers
to the controller, so `pytest -n auto` prints the same line as a plain run.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

PROPERTY = "fuzz_inputs"

_count = 0


def tried() -> None:
    """Count one input of the running fuzz test."""
    global _count
    _count += 1


def take() -> int:
    """The inputs counted since the last call: those of the test that just ran."""
    global _count
    count, _count = _count, 0
    return count


def scaled(factor: float) -> settings:
    """The loaded profile's example count times `factor` (ci: quick; thorough: many more), for a
    test that may reuse a function-scoped fixture (a store, services) across its examples."""
    loaded = settings.default
    assert loaded is not None
    return settings(
        max_examples=max(1, round(loaded.max_examples * factor)),
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
        ],
        deadline=None,
    )
