"""How many inputs the fuzz tests tried: each fuzz test calls `tried()` once per input, and the
session ends with one line that sums them (tests/conftest.py), so a run shows what it covered.

A test's count travels on its report (`user_properties`), which xdist sends from the workers
to the controller, so `pytest -n auto` prints the same line as a plain run.
"""

from __future__ import annotations

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
