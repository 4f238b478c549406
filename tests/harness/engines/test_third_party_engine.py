"""A third party ships `--engine theirframework` with one module and one entry point, from a
package outside the repository.

The package is the one docs/frameworks.md shows ("Your framework as a plug-in"): its module's
spec function builds, with the spec helper, an engine that wraps the reference engine through
the public protocol. It is written to a temporary folder and installed with pip (no index, no
build isolation, no dependencies: nothing downloaded) into a fresh virtual environment that
borrows this one's packages, killpoint among them; `killpoint run --engine theirframework` then runs
and judges a campaign from a project folder where the module is not importable but installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.support.blocks import read_blocks

PAGE = Path(__file__).parents[3] / "docs" / "frameworks.md"
PYPROJECT = """\
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "theirframework"
version = "0.1.0"

[tool.setuptools]
py-modules = ["theirframework"]
"""
SMALLEST = ["--no-double", "--no-network", "--no-interleave", "--no-named", "--no-deploys",
            "--no-operators", "--no-lies", "--no-neighbours", "--no-canaries", "--no-pauses",
            "--no-real-pass"]  # fmt: skip


def _shown(name: str) -> str:
    """A block of the frameworks page: the package is the one the page shows."""
    # <!-- example: plugin-entry-point --> <!-- example: plugin-module -->
    (block,) = [b for b in read_blocks(PAGE) if b.marker.get("example") == name]
    return block.text


def _venv(root: Path) -> Path:
    """A fresh environment that sees this one's packages as a site folder (so its editable
    killpoint too) and installs into its own."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = next((root / "lib").glob("python*/site-packages"))
    borrowed = sysconfig.get_paths()["purelib"]
    (site / "borrowed.pth").write_text(f"import site; site.addsitedir({borrowed!r})\n")
    return root / "bin" / "python"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}


def test_a_package_outside_the_repository_adds_an_engine_killpoint_run_finds(
    tmp_path: Path,
) -> None:
    package = tmp_path / "theirpackage"
    package.mkdir()
    (package / "pyproject.toml").write_text(PYPROJECT + "\n" + _shown("plugin-entry-point"))
    (package / "theirframework.py").write_text(_shown("plugin-module"))
    python = _venv(tmp_path / "venv")
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps",
         "--no-build-isolation", str(package)],
        env=_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    project = tmp_path / "project"  # their module is not in it: only installed
    project.mkdir()
    run = subprocess.run(
        [str(python), "-c", "from killpoint.harness.cli import main; main()", "run",
         "--engine", "theirframework", "-s", "email", *SMALLEST, "--workdir", "out", "--json",
         "-q"],
        cwd=project, env=_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["engine"] == "theirframework:keyed"
    assert result["runs"] > 0 and result["violations"] == []
    assert result["valid"] is not False


def test_the_engine_is_found_only_once_installed(tmp_path: Path) -> None:
    """The control: without the package, the same command is a user error naming the known."""
    python = _venv(tmp_path / "venv")
    run = subprocess.run(
        [str(python), "-c", "from killpoint.harness.cli import main; main()", "run",
         "--engine", "theirframework", "-s", "email", "--workdir", str(tmp_path / "out")],
        env=_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 2
    assert "no engine named 'theirframework'" in " ".join(run.stderr.split())
