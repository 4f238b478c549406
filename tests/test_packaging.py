"""The installed package is killpoint alone: a user project with folders named like ours works.

A wheel is built from this checkout and installed in a fresh virtual environment; a campaign and
a pytest session with the plugin then run from a project folder that has packages of its own
called `harness`, `scenarios` and `reports`. The fresh environment borrows this one's
dependencies (a `.pth` line, not a site folder, so this environment's editable killpoint is
not seen): nothing is downloaded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
GENERIC = ("harness", "scenarios", "reports", "fake_services")

OWN_TEST = """
import pytest

@pytest.mark.killpoint("email", double=False, network=False, named=False)
def test_email_survives_every_crash(killpoint_result):
    assert killpoint_result.scenarios[0].boundaries_crashed
"""


def _checkout(into: Path) -> Path:
    """The project's files as git knows them (links kept as links), without the build folder
    an earlier build left, which setuptools would package again."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for name in listed:
        source, target = ROOT / name, into / name
        if source.is_symlink() or source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    return into


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = _checkout(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(source)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (built,) = out.glob("killpoint-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = next((root / "lib").glob("python*/site-packages"))
    (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    with zipfile.ZipFile(wheel) as archive:  # what installing a pure wheel does
        archive.extractall(site)
    bin_dir = root / "bin"
    (bin_dir / "killpoint").write_text(
        f"#!{bin_dir / 'python'}\nfrom killpoint.harness.cli import main\nmain()\n"
    )
    (bin_dir / "killpoint").chmod(0o755)
    return root


def test_the_wheel_installs_only_killpoint_at_the_top(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
        names = archive.namelist()
    assert {t for t in tops if not t.endswith(".dist-info")} == {"killpoint"}
    assert "killpoint/reports/templates/report.html.j2" in names  # package data too
    assert "killpoint/reference/store.py" in names
    assert "killpoint/harness/cli/run.py" in names and "killpoint/harness/cli.py" not in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(entry_points).decode()
    assert "killpoint.harness.pytest_plugin" in text and "killpoint.scenarios:catalogue" in text


def _project(tmp_path: Path) -> Path:
    """A user's project whose own packages are named like killpoint's folders."""
    project = tmp_path / "project"
    for name in GENERIC:
        package = project / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(f'"""the user\'s own {name}"""\nMINE = True\n')
    (project / "test_checkout.py").write_text(OWN_TEST)
    return project


def _env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_a_campaign_runs_from_a_project_with_its_own_harness_scenarios_and_reports(
    venv: Path, tmp_path: Path
) -> None:
    project = _project(tmp_path)
    run = subprocess.run(
        ["killpoint", "run", "-s", "email", "--no-double", "--no-network", "--workdir", "out",
         "--report", "out/report.html", "--json"],
        cwd=project, env=_env(venv), capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert '"violations": []' in run.stdout
    assert (project / "out" / "report.html").read_text().startswith("<!DOCTYPE html>")
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import killpoint, reports; "
         "print(killpoint.__file__); print(reports.MINE)"],
        cwd=project, env=_env(venv), capture_output=True, text=True, check=True,
    )  # fmt: skip
    installed, mine = where.stdout.split()
    assert Path(installed).is_relative_to(venv) and mine == "True"


def test_the_plugin_loads_beside_a_project_reports_package(venv: Path, tmp_path: Path) -> None:
    """Measured before: a project with its own `reports/` broke the plugin at setup."""
    project = _project(tmp_path)
    session = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--killpoint-report=out/report.html", "test_checkout.py"],
        cwd=project, env=_env(venv), capture_output=True, text=True,
    )  # fmt: skip
    assert session.returncode == 0, session.stdout + session.stderr
    assert "1 passed" in session.stdout
    assert (project / "out" / "report.html").exists()
