"""Small modules with one job each: no module over 400 lines, no function over 60, anywhere in
the repository (the product, its tests, the benchmarks, the examples).

A declarative table (rows of data, such as the seeds' fault tables in scenarios/cases.py) may
one day need more room than a module's limit; none does today, so there is no exception list.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

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
