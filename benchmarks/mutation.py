"""The suite's own mutation score (issue 26, point 7): which broken lines of the product no test
notices.

The harness measures its oracle against broken engines; this measures the tests against broken
harness code. Each mutant is one of cosmic-ray's mutation operators (the package from the
registry, `pip install -e '.[mutation]'`) applied at one place in one module; the module's own
tests (`SUITES`, or the mirrored `tests/…/test_<module>.py`) then run against it, and a mutant
no test fails on *survives*.

cosmic-ray's own runner rewrites the file on disk and starts a fresh `pytest` per mutant: ten
seconds of imports for half a second of tests on this machine. This driver uses cosmic-ray's
operators but runs each mutant in a child forked from a warm process (third-party libraries
already imported), with the mutated module served from memory by an import hook: nothing is
written to the checkout, so an interrupted run leaves it clean. The price: a test that starts a
*new interpreter* (the CLI in a subprocess) sees the original module, so the suites below are
in-process tests.

    .venv/bin/python benchmarks/mutation.py harness/checkers reference/ledger.py

prints, per module, mutants killed / survived / timed out and the survivors (file:line, the
operator, the line before and after). Survivors shown equivalent are listed in `EQUIVALENT`
with the reason, and counted apart.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import importlib.abc
import importlib.util
import io
import os
import random
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOT_REACHED = 99  # a child's exit code: its tests never imported the mutated module
sys.path.insert(0, str(HERE))

from mutation_config import EQUIVALENT, OPERATORS, SUITES  # noqa: E402


@dataclass(frozen=True)
class Mutant:
    """One operator applied at one place: the mutated source, and the line it changed."""

    path: str
    operator: str
    line: int
    before: str
    after: str
    source: str


@dataclass
class Score:
    """A module's figures: killed (a test failed, or the mutant hung), survived, equivalent."""

    path: str
    killed: int = 0
    timeout: int = 0
    equivalent: int = 0
    survivors: list[Mutant] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.killed + self.timeout + self.equivalent + len(self.survivors)

    @property
    def score(self) -> float:
        """Killed over the mutants that are not equivalent: 1.0 when nothing is left alive."""
        live = self.total - self.equivalent
        return (self.killed + self.timeout) / live if live else 1.0


def quiet_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where a change is noise, not a mutant: annotations (`int | None` is never evaluated, the
    modules use `from __future__ import annotations`) and f-strings (a verdict's wording)."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        annotations: list[ast.expr | None] = []
        if isinstance(node, ast.JoinedStr):
            annotations.append(node)
        elif isinstance(node, ast.arg):
            annotations.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for note in annotations:
            if note is not None and note.end_lineno is not None and note.end_col_offset is not None:
                spans.append(
                    ((note.lineno, note.col_offset), (note.end_lineno, note.end_col_offset))
                )
    return spans


def _is_a_marker(node: Any) -> bool:
    """A `*` that is not multiplication: a parameter list's keyword-only marker, `*args`."""
    parent = getattr(getattr(node, "parent", None), "type", None)
    return getattr(node, "value", None) in ("*", "**") and parent in (
        "param",
        "parameters",
        "argument",
    )


def mutants_of(path: str) -> Iterator[Mutant]:
    """Every mutant cosmic-ray's chosen operators make of the module at `path`."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    source = (ROOT / path).read_text(encoding="utf-8")
    spans = quiet_spans(source)
    lines = source.splitlines()
    for name in OPERATORS:
        operator = get_operator(name)()
        places = [
            (node, start)
            for node in ast_nodes(get_ast(source))
            for start, _ in operator.mutation_positions(node)
        ]
        for occurrence, (node, start) in enumerate(places):
            if any(low <= start < high for low, high in spans) or _is_a_marker(node):
                continue
            try:
                mutated = mutate_code(source, operator, occurrence)
            except AttributeError:  # cosmic-ray's ExceptionReplacer on `except (a.B, C)`
                continue
            if mutated is None or mutated == source:
                continue
            line = start[0]
            after = mutated.splitlines()[line - 1] if line <= len(mutated.splitlines()) else ""
            yield Mutant(path, name, line, lines[line - 1].strip(), after.strip(), mutated)


def module_name(path: str) -> str:
    """`harness/checkers/fencing.py` → `killpoint.harness.checkers.fencing`."""
    parts = Path(path).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("killpoint", *parts))


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module's mutated source from memory; every other import goes to disk."""

    def __init__(self, mutant: Mutant) -> None:
        self.mutant = mutant
        self.name = module_name(mutant.path)
        self.served = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        file = ROOT / "killpoint" / self.mutant.path
        package = [str(file.parent)] if file.name == "__init__.py" else None
        return importlib.util.spec_from_file_location(
            fullname, file, loader=self, submodule_search_locations=package
        )

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        self.served = True
        code = compile(self.mutant.source, str(ROOT / "killpoint" / self.mutant.path), "exec")
        exec(code, module.__dict__)


def _forget() -> None:
    """Drop every module of ours and the tests: a child imports them anew, against the mutant,
    and finds the third-party ones (pydantic, SQLAlchemy, Hypothesis, pytest) warm. Only part of
    ours would be faster, but a kept module's classes would meet the re-imported modules' own:
    two `Versions` classes, and pydantic refuses the one it was not built with."""
    for name in [name for name in sys.modules if name.split(".")[0] in ("killpoint", "tests")]:
        del sys.modules[name]


def warm(tests: Sequence[str]) -> None:
    """Import what the tests import once, in the parent, then forget our own modules."""
    import pytest

    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(["-q", "--collect-only", "-p", "no:cacheprovider", *tests])
    _forget()


def run_tests(tests: Sequence[str], mutant: Mutant | None, timeout: float) -> str:
    """ "passed", "failed" or "timeout": the tests, in a forked child, against `mutant`."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        os.setpgid(0, 0)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        from cosmic_ray.exceptions import CosmicRayTestingException

        builtins.CosmicRayTestingException = CosmicRayTestingException  # type: ignore[attr-defined]
        finder = _MutantFinder(mutant) if mutant is not None else None
        if finder is not None:
            sys.meta_path.insert(0, finder)
        import pytest

        # Plain asserts: pytest's rewriting hook would load our modules (a pytest11 plugin's
        # package) from disk ahead of the mutant's finder.
        args = ["-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--assert=plain"]
        code = int(pytest.main([*args, *tests]))
        os._exit(NOT_REACHED if finder is not None and not finder.served else code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            if code == NOT_REACHED:
                raise SystemExit(
                    f"{mutant and mutant.path}: its tests {list(tests)} never import it"
                )
            return "passed" if code == 0 else "failed"
        time.sleep(0.05)
    os.killpg(child, signal.SIGKILL)
    os.waitpid(child, 0)
    return "timeout"


def suite_of(path: str) -> tuple[str, ...]:
    """The tests a module's mutants run against: `SUITES`, else the mirrored test module."""
    if path in SUITES:
        return SUITES[path]
    mirrored = Path("tests") / Path(path).parent / f"test_{Path(path).stem}.py"
    if not (ROOT / mirrored).exists():
        raise SystemExit(f"{path}: no tests/…/test_{Path(path).stem}.py; name its tests in SUITES")
    return (str(mirrored),)


def measure(path: str, sample: int | None, seed: int, line: int | None = None) -> Score:
    """Run every mutant of one module (or a sample, or those of one line) against its tests."""
    tests = suite_of(path)
    warm(tests)
    started = time.monotonic()
    if run_tests(tests, None, timeout=600) != "passed":
        raise SystemExit(f"{path}: its tests {list(tests)} fail without a mutant")
    timeout = max(20.0, 5 * (time.monotonic() - started))
    mutants = [m for m in mutants_of(path) if line is None or m.line == line]
    if sample is not None and sample < len(mutants):
        mutants = random.Random(seed).sample(mutants, sample)
    score = Score(path)
    for mutant in mutants:
        reason = EQUIVALENT.get((mutant.path, mutant.before, mutant.operator))
        outcome = run_tests(tests, mutant, timeout)
        if outcome == "failed":
            score.killed += 1
        elif outcome == "timeout":
            score.timeout += 1
        elif reason is not None:
            score.equivalent += 1
        else:
            score.survivors.append(mutant)
    return score


def modules(arguments: Sequence[str]) -> list[str]:
    """The modules named, a folder standing for every module in it."""
    found: list[str] = []
    for argument in arguments:
        target = ROOT / argument
        if target.is_dir():
            found += sorted(str(p.relative_to(ROOT)) for p in target.glob("*.py"))
        else:
            found.append(argument)
    return found


def report(score: Score) -> str:
    """The module's line of figures, then each survivor: where, which operator, what changed."""
    lines = [
        f"{score.path}: {score.total} mutants, {score.killed} killed, {score.timeout} timeout, "
        f"{len(score.survivors)} survived, {score.equivalent} equivalent — "
        f"score {score.score:.0%}"
    ]
    for mutant in score.survivors:
        lines.append(f"  survived {mutant.path}:{mutant.line} {mutant.operator}")
        lines.append(f"    - {mutant.before}")
        lines.append(f"    + {mutant.after}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("targets", nargs="+", help="modules or folders, relative to the checkout")
    parser.add_argument("--sample", type=int, help="run only this many mutants per module")
    parser.add_argument("--seed", type=int, default=0, help="which sample")
    parser.add_argument("--line", type=int, help="only the mutants of this line (one module)")
    options = parser.parse_args(argv)
    os.chdir(ROOT)
    scores = []
    for path in modules(options.targets):
        scores.append(measure(path, options.sample, options.seed, options.line))
        print(report(scores[-1]), flush=True)
    live = sum(s.total - s.equivalent for s in scores)
    killed = sum(s.killed + s.timeout for s in scores)
    print(f"all: {killed} of {live} non-equivalent mutants killed ({killed / max(live, 1):.0%})")
    return 0 if all(not s.survivors for s in scores) else 1


if __name__ == "__main__":
    sys.path.insert(1, str(ROOT))
    raise SystemExit(main())
