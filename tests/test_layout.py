"""Small modules with one job each: no module over 400 lines, no function over 60, anywhere in
the repository (the product, its tests, the benchmarks, the examples).

A declarative table (rows of data, such as the seeds' fault tables in scenarios/cases.py) may
one day need more room than a module's limit; none does today, so there is no exception list.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
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


@pytest.mark.parametrize(
    "folder", ["contract", "reference", "harness", "fake_services", "scenarios", "reports"]
)
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


PRODUCT = ("contract", "reference", "harness", "fake_services", "scenarios", "reports")
# The harness's rooms (pyproject's "rooms are layers" contract orders them) and its public model.
ROOMS = {"cli", "cli/operator", "pytest_plugin", "campaign", "engines", "run", "checkers"}
MODEL = {
    "canaries",
    "catalogue",
    "findings",
    "history",
    "lies",
    "loading",
    "objectives",
    "operator",
    "options",
    "protocol",
    "results",
    "scenario",
    "schedule",
    "tampering",
}
# Test folders that mirror no package: the CI templates' checks, the docs' checks and the helpers
# every test shares.
BESIDE = {"ci", "docs", "support", "support/command_engines"}


def _packages(top: Path) -> set[str]:
    return {
        str(init.parent.relative_to(top))
        for init in top.rglob("__init__.py")
        if "__pycache__" not in init.parts and "node_modules" not in init.parts
    }


def test_every_product_package_has_its_test_folder_and_every_test_folder_a_package() -> None:
    """Tests mirror the product: `killpoint.harness.run` is tested in `tests/harness/run/`."""
    product = set()
    for folder in PRODUCT:
        product |= {folder if p == "." else f"{folder}/{p}" for p in _packages(ROOT / folder)}
    tests = {p for p in _packages(ROOT / "tests") if p != "." and p not in BESIDE}
    tested = {p for p in product if (ROOT / "tests" / p / "__init__.py").is_file()}
    assert (sorted(product - tested), sorted(tests - product)) == ([], [])


def test_the_harness_is_its_public_model_over_its_rooms() -> None:
    harness = ROOT / "harness"
    rooms = {p for p in _packages(harness) if p != "."}
    model = {p.stem for p in harness.glob("*.py") if p.stem != "__init__"}
    assert (rooms, model) == (ROOMS, MODEL)


def test_the_import_contract_holds_the_whole_public_model() -> None:
    """A module added at the top of the harness is under the contract that keeps the public
    model out of the rooms, not beside it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"] == "The harness's public model imports none of its rooms"
    ]
    listed = {m.removeprefix("killpoint.harness.") for m in contract["source_modules"]}
    rooms = {m.removeprefix("killpoint.harness.") for m in contract["forbidden_modules"]}
    assert (listed, rooms) == (MODEL, {r for r in ROOMS if "/" not in r})


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def test_no_test_imports_another_test_module_and_helpers_live_in_support() -> None:
    """A test imports shared helpers from `tests.support`, never from another test module (whose
    collection would then run twice, and whose helpers no one would think to look for)."""
    crossing: list[str] = []
    astray: list[str] = []
    for path in (ROOT / "tests").rglob("*.py"):
        name = str(path.relative_to(ROOT))
        if any(
            m.split(".")[-1].startswith("test_") for m in _imports(path) if m.startswith("tests")
        ):
            crossing.append(name)
        helper = not path.stem.startswith("test_") and path.stem not in {"__init__", "conftest"}
        if helper and path.parent != ROOT / "tests" and "support" not in path.parts:
            astray.append(name)
    assert (sorted(crossing), sorted(astray)) == ([], [])
