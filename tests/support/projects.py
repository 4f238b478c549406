"""A document's fresh project: the files its blocks write, and its commands run there for real.

Commands run as a user runs them, in a subprocess in the project's folder, with this
environment's interpreter: `killpoint …` is the console script, `pytest …` loads killpoint's
plugin by its entry point (the other plugins of this environment — Hypothesis, xdist,
LangSmith … — are not the user's, and cost seconds at start, so autoloading is off), `python
FILE` runs FILE. `pip install …` is pip itself, building the project with this environment's
setuptools, but into a folder of the project on the path (`--target`) and offline (`--no-index
--no-deps --no-build-isolation`): nothing is downloaded and this environment is left alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.blocks import Block
from tests.support.commands import Command, program

BIN = Path(sys.executable).parent
OFFLINE = ("--quiet", "--no-index", "--no-deps", "--no-build-isolation", "--target")
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

    @property
    def site(self) -> Path:
        """Where `pip install` installs: importlib.metadata finds the entry points there."""
        return self.folder / ".installed"

    def environment(self) -> dict[str, str]:
        """The user's shell: none of this test session's pytest or killpoint settings."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PYTEST_", "KILLPOINT_", "HYPOTHESIS_", "COV_"))
        }
        env.update(
            PYTHONPATH=os.pathsep.join((str(self.site), str(self.folder))),
            PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
            COLUMNS="200",
        )
        return env

    def run(self, command: Command) -> Ran:
        argv = command.argv
        name = program(argv)
        if name == "pip" and argv[1:2] == ["install"]:
            argv = [sys.executable, "-m", "pip", "install", *OFFLINE, str(self.site), *argv[2:]]
        elif name == "killpoint":
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
