"""Shell lines of the documentation: split into commands, and checked without running them.

A `killpoint` command is parsed by the real CLI (typer's own parser: an unknown flag, a missing
value or a bad choice fails), its campaign options are converted by `CampaignOptions` (the
`--jobs`, `--explore`, `--shard` … text a campaign would reject), its scenarios and mutants are
looked up in the installed catalogues (plus the project's own), and the schedule or result files
it names must exist unless they are a campaign's output. A synopsis (`[--db URL]`, `...`) is
checked flag by flag. Every other program has a rule of what it needs of the repository (a
script, a test path, an extra); a program no rule knows is a failure, not a pass.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer.main
from typer.core import TyperGroup

from killpoint.contract.errors import KillpointError
from killpoint.harness.catalogue import installed
from killpoint.harness.cli import app
from killpoint.harness.engines.engine_file import file_engine
from killpoint.harness.engines.registry import installed_engines
from killpoint.harness.engines.units import VARIANTS
from killpoint.harness.options import OPTIONS, CampaignOptions, OptionError
from tests.support.blocks import ROOT

EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")
FLAG = re.compile(r"(?<![\w/.-])(--?[A-Za-z][\w-]*)")
SYNOPSIS = re.compile(r"\[|\.\.\.|…|\s\|\s")
ENV = re.compile(r"^[A-Z_][A-Z0-9_]*=")
OUTPUTS = ("killpoint-out/",)  # files an earlier command writes: named, never in the repository


@dataclass(frozen=True)
class Command:
    text: str  # the command as the documentation writes it (comment removed)
    exit: int  # the status it is said to end with (`# exit N`), 0 unless said

    @property
    def synopsis(self) -> bool:
        return bool(SYNOPSIS.search(self.text))

    @property
    def argv(self) -> list[str]:
        """The words, without leading `NAME=value` environment assignments."""
        words = shlex.split(self.text)
        while words and ENV.match(words[0]):
            words.pop(0)
        return words


def commands(script: str) -> list[Command]:
    """The commands of a shell block: continuation lines (a trailing `\\`, or an indented
    synopsis line) joined, `&&` chains split, comments dropped."""
    lines: list[str] = []
    for raw in script.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if lines and (lines[-1].endswith("\\") or raw[:1].isspace()):
            lines[-1] = lines[-1].removesuffix("\\").rstrip() + " " + raw.strip()
        else:
            lines.append(raw.rstrip())
    found: list[Command] = []
    for line in lines:
        said = EXIT.search(line)
        code = int(said.group(1)) if said else 0
        body = re.sub(r"\s#.*$", "", line).strip()
        found += [Command(part.strip(), code) for part in body.split("&&")]
    return found


def program(argv: list[str]) -> str:
    """`.venv/bin/killpoint` → killpoint; `python -m killpoint` → killpoint."""
    name = Path(argv[0]).name
    if name.startswith("python") and argv[1:3] == ["-m", "killpoint"]:
        return "killpoint"
    return name


def check(command: Command, scenarios: Iterable[str] = ()) -> list[str]:
    """What is wrong with `command` as the documentation writes it (nothing: [])."""
    argv = command.argv
    name = program(argv)
    if name == "killpoint":
        args = argv[3:] if Path(argv[0]).name.startswith("python") else argv[1:]
        if command.synopsis:
            return _killpoint_synopsis(command.text)
        return killpoint_problems(args, set(scenarios))
    rule = RULES.get(name)
    if rule is None:
        return [f"no rule checks {name!r} ({command.text}): add one to {__name__}.RULES"]
    return rule(argv, command)


# -- killpoint ------------------------------------------------------------------------------------


def _cli() -> TyperGroup:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    return group


def killpoint_problems(args: list[str], scenarios: set[str]) -> list[str]:
    """Parse `killpoint ARGS` as the CLI would, without running it."""
    if not args:
        return []
    command = _cli().commands.get(args[0])
    if command is None:
        return [f"killpoint has no command {args[0]!r}"]
    command, args = _subcommand(command, args)
    try:
        ctx = command.make_context(args[0], list(args[1:]))
    except Exception as exc:  # typer's usage errors: an unknown flag, a bad value
        return [f"killpoint {args[0]}: {getattr(exc, 'format_message', exc.__str__)()}"]
    params: dict[str, Any] = {k: v for k, v in ctx.params.items() if v is not None}
    problems = _options(params)
    known = set(installed().scenarios) | scenarios
    problems += [f"no scenario {s!r}" for s in params.get("scenarios", ()) if s not in known]
    problems += _engine(params.get("engine"))
    problems += [
        f"no mutant {m!r}" for m in params.get("mutant", ()) if m not in installed().mutants
    ]
    files = [params.get("schedule_file"), *params.get("results", ())]
    problems += [f"{f} does not exist" for f in files if f is not None and _missing(str(f))]
    return problems


def _subcommand(command: Any, words: list[str]) -> tuple[Any, list[str]]:
    """A group's subcommand (`control terminate …`) and the words from its name on."""
    if isinstance(command, TyperGroup) and len(words) > 1 and words[1] in command.commands:
        return command.commands[words[1]], words[1:]
    return command, words


def _options(params: dict[str, Any]) -> list[str]:
    """The campaign options convert as a campaign would convert them (`--jobs auto`)."""
    try:
        CampaignOptions().merged({k: v for k, v in params.items() if k in OPTIONS})
    except OptionError as exc:
        return [f"--{exc.name.replace('_', '-')}: {exc.message}"]
    return []


def _engine(ref: object) -> list[str]:
    if not isinstance(ref, str) or ref == "reference":
        return []
    if ref.startswith("mutant:"):
        name = ref.removeprefix("mutant:")
        return [] if name in installed().mutants else [f"no mutant {name!r}"]
    if ref.startswith("cmd:"):
        return [] if ref.removeprefix("cmd:").strip() else ["--engine cmd: names no command"]
    if ref.endswith(".toml"):  # an engine file of the repository, read as `--engine` reads it
        if not (ROOT / ref).is_file():
            return [f"no engine file {ref}"]
        try:
            file_engine(str(ROOT / ref))
        except KillpointError as exc:
            return [str(exc)]
        return []
    framework, _, variant = ref.partition(":")
    if framework in installed_engines():
        return [] if variant in ("", *VARIANTS) else [f"{framework} has no variant {variant!r}"]
    return [] if variant else [f"--engine {ref!r} is neither a known engine nor module:factory"]


def _killpoint_synopsis(text: str) -> list[str]:
    """Each `killpoint CMD [--flag …]` alternative: CMD exists and has every flag written."""
    group, problems = _cli(), []
    for part in re.split(r"\s\|\s", text.split("killpoint", 1)[1]):
        words = part.split()
        if not words or words[0] in ("...", "…"):
            continue
        command = group.commands.get(words[0])
        if command is None:
            problems.append(f"killpoint has no command {words[0]!r}")
            continue
        command, words = _subcommand(command, words)
        flags = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        problems += [
            f"killpoint {words[0]} has no {f}" for f in FLAG.findall(part) if f not in flags
        ]
    return problems


# -- the other programs ---------------------------------------------------------------------------


def _missing(path: str) -> bool:
    """A repository path that is not there (a campaign's output or a placeholder is not one)."""
    if path.startswith(OUTPUTS) or "…" in path or "..." in path:
        return False
    return not (ROOT / path).exists()


def _paths(argv: list[str], command: Command) -> list[str]:
    """The test paths of `pytest`, the script of `bash`: each must exist."""
    paths = [w for w in argv[1:] if not w.startswith("-") and ("/" in w or w.endswith(".py"))]
    return [f"{p} does not exist" for p in paths if _missing(p)]


def _pip(argv: list[str], command: Command) -> list[str]:
    """`pip install -e '.[a,b]'` or `'killpoint[a]'`: every extra is declared in pyproject."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    wanted = [e for w in argv for e in re.findall(r"^(?:\.|killpoint)\[(.+)\]$", w)]
    return [f"no extra {x!r}" for group in wanted for x in group.split(",") if x not in extras]


def _python(argv: list[str], command: Command) -> list[str]:
    """`python -m venv`, or `python SCRIPT [--flag …]`: the script exists and knows each flag."""
    if argv[1:3] == ["-m", "venv"]:
        return []
    script = next((w for w in argv[1:] if w.endswith(".py")), None)
    if script is None or _missing(script):
        return [f"{command.text}: no script of the repository to check"]
    source = (ROOT / script).read_text()
    return [f"{script} has no {f}" for f in FLAG.findall(command.text) if f not in source]


def _cp(argv: list[str], command: Command) -> list[str]:
    return [f"{src} does not exist" for src in argv[1:-1] if _missing(src)]


def _npm(argv: list[str], command: Command) -> list[str]:
    """`npm --prefix FOLDER ci` or `npm --prefix FOLDER run SCRIPT`: the folder's package.json
    (and, for `ci`, its lock file) is in the repository and declares the script."""
    words, folder = argv[1:], "."
    if words[:1] == ["--prefix"] and len(words) > 1:
        folder, words = words[1], words[2:]
    package = ROOT / folder / "package.json"
    if not package.is_file():
        return [f"{folder} has no package.json"]
    if words == ["ci"]:
        lock = ROOT / folder / "package-lock.json"
        return [] if lock.is_file() else [f"{folder} has no package-lock.json for npm ci"]
    if len(words) == 2 and words[0] == "run":
        scripts = json.loads(package.read_text()).get("scripts", {})
        return [] if words[1] in scripts else [f"{package} has no script {words[1]!r}"]
    return [f"no rule checks {command.text!r}: npm --prefix FOLDER ci | run SCRIPT"]


RULES = {
    "pytest": _paths,
    "bash": _paths,
    "pip": _pip,
    "python": _python,
    "python3": _python,
    "cp": _cp,
    "npm": _npm,
}
