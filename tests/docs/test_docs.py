"""The documentation runs: every code block of README.md and docs/ is run, checked or marked as
a sample (`tests/support/blocks.py` says how), so an example that stops working fails here, not in
a reader's hands.

Run or only parsed, per block: a block runs when it runs in seconds (the plugin example, the
guide's quick campaigns, a replay). A block is only parsed — every killpoint flag, value,
scenario, engine and file checked against the real CLI and the repository — when running it
would cost minutes or change this machine, and its marker says which: the main job and the
framework campaigns (minutes; `tests/harness/engines` and the main job's own tests run them), the
test and benchmark commands (this suite itself, minutes of benchmarks), a synopsis (not a
command), a replay of a file an earlier campaign wrote.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import tomllib
from pathlib import Path
from typing import Any

import pytest

from killpoint.harness.catalogue import Catalogue
from tests.support.blocks import ROOT, Block, all_blocks, output_shown, problem
from tests.support.commands import check, commands
from tests.support.projects import Project, Ran

BLOCKS = all_blocks()


def where(block: Block) -> str:
    return block.where


def blocks_with(directive: str) -> list[Block]:
    return [b for b in BLOCKS if directive in b.marker]


def resolve(name: str) -> Any:
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def test_every_block_is_run_checked_or_a_marked_sample() -> None:
    problems = []
    for before, block in zip([None, *BLOCKS], BLOCKS, strict=False):
        above = before if before is not None and before.doc == block.doc else None
        found = problem(block, above)
        if found:
            problems.append(f"{block.where}: {found}")
    assert problems == []


@pytest.mark.parametrize("block", blocks_with("parse only"), ids=where)
def test_a_parsed_block_is_what_the_cli_and_the_repository_accept(
    block: Block, tmp_path: Path
) -> None:
    own = own_scenarios(block.doc, tmp_path)
    problems = [f"{c.text}: {p}" for c in commands(block.text) for p in check(c, own)]
    assert problems == []


def own_scenarios(doc: Path, tmp_path: Path) -> set[str]:
    """The scenarios of the catalogues a document's own project registers (none: empty)."""
    blocks = [b for b in BLOCKS if b.doc == doc]
    if not any(b.marker.get("file") == "pyproject.toml" for b in blocks):
        return set()
    project = Project(tmp_path / "project", blocks)
    pyproject = tomllib.loads((project.folder / "pyproject.toml").read_text())
    names: set[str] = set()
    for target in pyproject["project"]["entry-points"]["killpoint.catalogues"].values():
        module_name, _, attr = target.partition(":")
        spec = importlib.util.spec_from_file_location(
            f"docs_project_{module_name}", project.folder / f"{module_name}.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        catalogue = getattr(module, attr)
        catalogue = catalogue if isinstance(catalogue, Catalogue) else catalogue()
        names |= set(catalogue.scenarios)
    return names


RUN_DOCS = sorted({b.doc for b in blocks_with("run")})


@pytest.mark.parametrize("doc", RUN_DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_the_examples_of_a_document_run_in_a_fresh_project(doc: Path, tmp_path: Path) -> None:
    blocks = [b for b in BLOCKS if b.doc == doc]
    project = Project(tmp_path / "project", blocks)
    last: list[Ran] = []
    for block in blocks:
        if "output" in block.marker:
            printed = "\n".join(r.output for r in last)
            missing = output_shown(block.text, printed)
            assert missing is None, f"{block.where}: the output lacks {missing!r}:\n{printed}"
        elif "run" in block.marker:
            last = run_block(project, block)


def run_block(project: Project, block: Block) -> list[Ran]:
    """Each command of the block (or of its marker's `run: COMMAND`), ending as it says."""
    if block.lang == "python" and not block.marker["run"]:
        ran = project.run_python(block.text, f"block_{block.line}.py")
        assert ran.code == 0, f"{block.where}: {ran.failed(0)}"
        return [ran]
    done = []
    for command in commands(block.marker["run"] or block.text):
        ran = project.run(command)
        failed = ran.failed(command.exit)
        assert failed is None, f"{block.where}: {failed}"
        done.append(ran)
    return done


@pytest.mark.parametrize("block", blocks_with("sketch"), ids=where)
def test_a_sketch_outlines_the_methods_of_the_real_object(block: Block) -> None:
    real = resolve(block.marker["sketch"])
    (drawn_class,) = [n for n in ast.parse(block.text).body if isinstance(n, ast.ClassDef)]
    drawn = {
        f.name: ([a.arg for a in f.args.args[1:]], ast.unparse(f.returns) if f.returns else None)
        for f in drawn_class.body
        if isinstance(f, ast.FunctionDef)
    }
    actual = {
        name: (list(inspect.signature(fn).parameters)[1:], fn.__annotations__.get("return"))
        for name, fn in vars(real).items()
        if inspect.isfunction(fn) and not name.startswith("_")
    }
    assert drawn == actual


@pytest.mark.parametrize("block", blocks_with("model"), ids=where)
def test_a_json_block_validates_as_the_model_it_shows(block: Block) -> None:
    resolve(block.marker["model"]).model_validate_json(block.text)


@pytest.mark.parametrize("block", blocks_with("example"), ids=where)
def test_an_example_is_taken_by_a_test_of_its_own(block: Block) -> None:
    marker = f"<!-- example: {block.marker['example']} -->"
    takers = [
        p
        for p in (ROOT / "tests").rglob("*.py")
        if "docs" not in p.parts and marker in p.read_text(encoding="utf-8")
    ]
    assert takers, f"{block.where}: no test takes the block marked {marker}"
