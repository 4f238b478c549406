"""A document's fresh project: the files its blocks write, and its commands run there for real.

Commands run as a user runs them, in a subprocess in the project's folder, with this
environment's interpreter: `killpoint …` is the console script, `pytest …` loads killpoint's
plugin by its entry point (the other plugins of this environment — Hypothesis, xdist,
LangSmith … — are not the user's, and cost seconds at start, so autoloading is off), `python
FILE` runs FILE. `pip install -e .` writes what pip would for the project's pyproject.toml
(its name and its entry points, as a `.dist-info` on the path) instead of installing into this
environment or downloading anything.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tests.docs.blocks import Block
from tests.docs.commands import Command, program

BIN = Path(sys.executable).parent
TIMEOUT_S = 300


@dataclass(frozen=True)
class Ran:
    command: str
    code: int
    output: str  # stdout and stderr, interleaved as printed

    def failed(self, expected: int) -> str | None:
        if self.code == expected:
            return None
        return f"`{self.command}` exited {self.code}, not {expected}:\n{self.output[-6000:]}"


class Project:
    """The files of one document's `file:` blocks, in a folder of their own."""

    def __init__(self, folder: Path, blocks: list[Block]) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        for block in blocks:
            name = block.marker.get("file")
            if name:
                with (folder / name).open("a", encoding="utf-8") as out:
                    out.write(block.text)

    def environment(self) -> dict[str, str]:
        """The user's shell: none of this test session's pytest or killpoint settings."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PYTEST_", "KILLPOINT_", "HYPOTHESIS_", "COV_"))
        }
        env.update(
            PYTHONPATH=str(self.folder),
            PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
            COLUMNS="200",
        )
        return env

    def run(self, command: Command) -> Ran:
        argv = command.argv
        name = program(argv)
        if name == "pip" and argv[1:] == ["install", "-e", "."]:
            return self.install(command.text)
        if name == "killpoint":
            argv = [str(BIN / "killpoint"), *argv[1:]]
        elif name == "pytest":
            argv = [sys.executable, "-m", "pytest", "-p", "killpoint", "-p", "no:cacheprovider"]
            argv += command.argv[1:]
        elif name in ("python", "python3"):
            argv = [sys.executable, *argv[1:]]
        else:
            raise AssertionError(f"a run block cannot run {command.text!r}: no rule for {name!r}")
        return self._call(command.text, argv)

    def run_python(self, source: str, name: str) -> Ran:
        (self.folder / name).write_text(source, encoding="utf-8")
        return self._call(f"python {name}", [sys.executable, name])

    def _call(self, text: str, argv: list[str]) -> Ran:
        done = subprocess.run(
            argv,
            cwd=self.folder,
            env=self.environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        return Ran(text, done.returncode, done.stdout)

    def install(self, text: str) -> Ran:
        """What `pip install -e .` leaves behind for importlib.metadata: the distribution's
        name and the entry points its pyproject.toml declares."""
        project = tomllib.loads((self.folder / "pyproject.toml").read_text())["project"]
        name = project["name"].replace("-", "_")
        info = self.folder / f"{name}-{project['version']}.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
        )
        points = project.get("entry-points", {})
        (info / "entry_points.txt").write_text(
            "".join(
                f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in names.items()) + "\n"
                for group, names in points.items()
            )
        )
        return Ran(text, 0, f"installed {project['name']} (entry points: {sorted(points)})")
