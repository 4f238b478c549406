"""Small modules with one job each: no module over 400 lines, no function over 60, anywhere in
the repository (the product, its tests, the benchmarks, the examples).

A declarative table (rows of data, such as the seeds' fault tables in scenarios/cases.py) may
one day need more room than a module's limit; none does today, so there is no exception list.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
MODULE_LINES = 400
FUNCTION_LINES = 60


def _sources() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def test_no_module_is_over_the_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in _sources()
        if (n := len(path.read_text().splitlines())) > MODULE_LINES
    }
    assert long == {}


def test_no_function_is_over_the_limit() -> None:
    long: dict[str, int] = {}
    for path in _sources():
        name = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    long[f"{name}:{node.lineno} {node.name}"] = length
    assert long == {}


@pytest.mark.parametrize("folder", ["harness", "fake_services", "scenarios", "reports"])
def test_a_folder_imported_by_its_bare_name_fails_at_once_naming_the_right_import(
    folder: str,
) -> None:
    """From a checkout, `import harness` would load a second copy of every module (two
    `FaultSchedule` classes that are not one): it fails instead, saying what to import."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {folder}"],
        cwd=Path(__file__).parents[1],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert f"import killpoint.{folder}, not {folder}" in done.stderr
