"""The stateful example of docs/guide/hypothesis.md, copied into a fresh project as a user
would: the machine for the team's own scenario catches a broken engine, shrinks the failure to
a program of explicit rule calls, and that program, pasted below the machine, fails the same
way."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "hypothesis.md"
MARKER = "<!-- example: stateful -->"
INVARIANTS = ("state.oracle_holds(", "state.never_more_than_eight_workers(")


def readme_example() -> str:
    """The code block right after the marker, exactly as the guide shows it."""
    text = GUIDE.read_text(encoding="utf-8")
    after = text[text.index(MARKER) + len(MARKER) :]
    block = re.match(r"\s*```python\n(.*?)\n```", after, re.DOTALL)
    assert block is not None, "no python block after the stateful marker"
    return block.group(1) + "\n"


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # the example's own profiles apply: HYPOTHESIS_PROFILE=thorough hunts deeper here too
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["KILLPOINT_SCHEDULE_DIR"] = str(cwd / "schedules")
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def printed_program(output: str) -> list[str]:
    """Hypothesis's falsifying program: from `state = ...()` to `state.teardown()`."""
    lines = [re.sub(r"^E\s+", "", line) for line in output.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("state = "))
    end = next(i for i in range(start, len(lines)) if lines[i] == "state.teardown()")
    return lines[start : end + 1]


def test_the_readme_machine_catches_a_mutant_of_an_own_scenario_as_a_pasteable_program(
    tmp_path: Path,
) -> None:
    example = readme_example()
    (tmp_path / "test_notify.py").write_text(example, encoding="utf-8")
    # a fixed seed: the shrunk program is the same on every run (the guide keeps its database)
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0"]
    found = run(pytest, tmp_path)
    output = found.stdout + found.stderr
    assert found.returncode == 1, output
    assert "oracle violated: single_effect" in output, output
    program = printed_program(output)
    calls = [line for line in program if line.startswith("state.") and line != "state.teardown()"]
    assert calls and all(re.fullmatch(r"state\.\w+\(.*\)", c) for c in calls), program
    assert not any("data(" in line for line in program), program
    rules = [c for c in calls if not c.startswith(INVARIANTS)]
    assert 0 < len(rules) <= 4, program  # shrunk: a few rules, not the 8-step draw
    assert re.search(r'fault schedule \(.*\): \{"scenario": "notify_customer"', output), output
    assert "replay: killpoint replay " in output, output
    # pasted below the machine, the program fails the same way
    (tmp_path / "repro.py").write_text(example + "\n".join(program) + "\n", encoding="utf-8")
    again = run([sys.executable, "repro.py"], tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "AssertionError: oracle violated: single_effect" in again.stderr, again.stderr
