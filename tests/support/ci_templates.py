"""The CI templates (.github/, .gitlab/) read as their CI reads them, and their shell scripts run
with a stand-in `killpoint` that records its arguments and exits as it is told.

A GitHub expression (`${{ inputs.shard }}`) is resolved from a context the test gives; one the
context lacks fails, so a template cannot use a value no test has thought about.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.support.blocks import ROOT
from tests.support.commands import Command, check

ACTION = ROOT / ".github/actions/killpoint-campaign/action.yml"
WORKFLOW = ROOT / ".github/workflows/killpoint-campaign.yml"
GITLAB = ROOT / ".gitlab/killpoint-campaign.gitlab-ci.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
STAND_IN = f"""#!{sys.executable}
import json, os, sys
with open(os.environ["KP_RECORD"], "a") as record:
    record.write(json.dumps(sys.argv[1:]) + "\\n")
sys.exit(int(os.environ.get("KP_EXIT", "0")))
"""


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text())


def resolve(value: object, context: Mapping[str, str]) -> str:
    """`value` with each `${{ expr }}` replaced by `context[expr]`."""

    def one(match: re.Match[str]) -> str:
        expr = match.group(1)
        assert expr in context, f"no value for the expression {expr!r}"
        return context[expr]

    return EXPRESSION.sub(one, str(value))


@dataclass(frozen=True)
class Ran:
    status: int
    calls: list[list[str]]  # each `killpoint` call's arguments
    output: str  # what the script wrote to $GITHUB_OUTPUT


def run_script(script: str, env: Mapping[str, str], folder: Path, killpoint_exit: int = 0) -> Ran:
    """`script` run by bash as the CI runs it (`-eo pipefail`) in `folder`, with `env` and a
    stand-in `killpoint` first on PATH."""
    bin_dir = folder / ".bin"
    bin_dir.mkdir(exist_ok=True)
    stand_in = bin_dir / "killpoint"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(stand_in.stat().st_mode | stat.S_IXUSR)
    record, output = folder / ".calls", folder / ".github-output"
    record.write_text("")
    output.write_text("")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=folder,
        env={
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "KP_RECORD": str(record),
            "KP_EXIT": str(killpoint_exit),
            "GITHUB_OUTPUT": str(output),
            **env,
        },
        capture_output=True,
        text=True,
        check=False,
    )
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    return Ran(done.returncode, calls, output.read_text())


def step(steps: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The step whose `run` calls `killpoint NAME` (exactly one)."""
    (found,) = [s for s in steps if f"killpoint {name}" in s.get("run", "")]
    return found


def problems(calls: list[list[str]]) -> list[str]:
    """What the real CLI, the catalogue and the repository say of each `killpoint` call."""
    return [p for args in calls for p in check(Command(shlex.join(["killpoint", *args]), 0))]
