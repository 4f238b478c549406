"""Campaign options, declared once: what a crash campaign can be asked to do, and how.

Every option a user gives a campaign — on `killpoint run` and `killpoint mutants`, to the pytest
plugin (`--killpoint-<name>`, ini `killpoint_<name>`, env `KILLPOINT_<NAME>`), in the
`killpoint` marker and the `killpoint_campaign` fixture, or to `killpoint.run_campaign` — is one
field of `CampaignOptions`: its type, default, help, metavar and the fronts that offer it. The
fronts generate their flags from these fields and hand the result to the campaign room
(`killpoint.harness.campaign.launch.start`), whose `CampaignConfig.of` is the one place a
config is built, so an option is never repeated by hand and never dropped on the way. Each
field's `convert` takes a typed value or its text (a flag, an environment variable, an ini
line) and says in one line what it wants otherwise.

This module imports the standard library only: the pytest plugin reads it when pytest loads,
and the public model imports none of the harness's rooms.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self, get_type_hints

Tier = Literal["inprocess", "real"]
TIERS: tuple[Tier, ...] = ("inprocess", "real")
# Where an option is offered: the `run` and `mutants` commands, the replay command's store, the
# pytest plugin's option/ini/env, the marker and fixture. `killpoint.run_campaign` takes them all.
Front = Literal["run", "mutants", "replay", "pytest", "marker"]
Convert = Callable[[Any], Any]

EXPLORE = "60"  # the main job's exploration: runs per scenario (deterministic, unlike seconds)
TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})
FALSE = frozenset({"0", "false", "no", "off", "n", "f"})


class OptionError(ValueError):
    """A value an option cannot take; each front names the option its own way (a flag, an
    environment variable, a marker argument) before `message`."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name, self.message = name, message


# -- converters: a typed value or its text → the option's value; ValueError says what it wants --


def boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE | FALSE:
        return value.strip().lower() in TRUE
    raise ValueError(f"wants true or false, got {value!r}")


def whole(minimum: int | None = None) -> Convert:
    def convert(value: object) -> int:
        if isinstance(value, str) and value.strip().removeprefix("-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"wants a whole number, got {value!r}")
        if minimum is not None and value < minimum:
            raise ValueError(f"{value}: at least {minimum}")
        return value

    return convert


def one_of(*choices: str) -> Convert:
    def convert(value: object) -> str:
        if value not in choices:
            raise ValueError(f"wants one of {', '.join(choices)}, got {value!r}")
        return str(value)

    return convert


def text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise ValueError(f"wants text, got {value!r}")


def path(value: object) -> Path | None:
    if value is None or value == "":
        return None
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise ValueError(f"wants a path, got {value!r}")


def names(value: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else list(value or ())
    if not all(isinstance(item, str) for item in items):
        raise ValueError(f"wants names, got {value!r}")
    return tuple(items)


def shard(value: Any) -> tuple[int, int] | None:
    """`i/N` (or `(i, N)`): run every N-th planned run from the i-th."""
    if value is None:
        return None
    try:
        parts = value.split("/") if isinstance(value, str) else list(value)
        index, total = (int(part) for part in parts)
    except (TypeError, ValueError):
        raise ValueError(f"wants i/N (e.g. 1/4), got {value!r}") from None
    if not 1 <= index <= total:
        raise ValueError(f"{index}/{total}: i must be between 1 and N")
    return index, total


def budget(value: object) -> str:
    """An exploration budget: `RUNS` (`200`), `SECONDS` (`30s`), or `0`/`off` for none."""
    text_ = str(value).strip().lower()
    if text_ in ("0", "off", "no", "none", "false"):
        return "0"
    number = text_.removesuffix("s")
    if not number.replace(".", "", 1).isdigit() or (number == text_ and not number.isdigit()):
        raise ValueError(f"wants RUNS or SECONDS (200, 30s) or off, got {value!r}")
    return text_


def seconds(value: object) -> float:
    """A positive, finite number of seconds."""
    try:
        number = float(str(value).strip().removesuffix("s"))
    except ValueError:
        raise ValueError(f"wants a number of seconds, got {value!r}") from None
    if not 0 < number < 1e9:
        raise ValueError(f"{value}: between 0 and 1e9 seconds")
    return number


def processes(value: object) -> int:
    """A number of processes, or `auto` for one per core."""
    if value == "auto":
        return max(1, len(os.sched_getaffinity(0)))
    try:
        jobs = whole()(value)
    except ValueError:
        raise ValueError(f"wants a number or 'auto', got {value!r}") from None
    if jobs < 1:
        raise ValueError(f"{jobs}: at least one process is needed")
    return int(jobs)


# -- the declaration ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """How one field is offered. The CLI flag is `--<name>` (`flag` when given; booleans get
    `--no-<name>` too); the plugin's are `--killpoint-<name>`, ini `killpoint_<name>` and env
    `KILLPOINT_<NAME>` (`env` when given). A `text` option is typed as text on the command line
    (`i/N`, `N|auto`) and read by `convert`."""

    help: str
    convert: Convert
    fronts: frozenset[Front]
    metavar: str | None = None
    flag: str | None = None
    short: str | None = None
    env: str | None = None
    text: bool = False
    name: str = ""
    default: Any = None
    hint: Any = None  # the field's type

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def pytest_flag(self) -> str:
        return "--killpoint-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return f"killpoint_{self.name}"

    @property
    def env_var(self) -> str:
        return self.env or f"KILLPOINT_{self.name.upper()}"


def option(help: str, convert: Convert, *fronts: Front, **how: Any) -> dict[str, Option]:
    """A field's metadata: `field(default=…, metadata=option(help, convert, *fronts, …))`."""
    return {"option": Option(help=help, convert=convert, fronts=frozenset(fronts), **how)}


CAMPAIGN: tuple[Front, ...] = ("run", "pytest", "marker")
SHARED: tuple[Front, ...] = (*CAMPAIGN, "mutants")  # a hunt runs the campaign's plan too


class _Declared:
    """Validation and the field table shared by the option models below."""

    def __post_init__(self) -> None:
        for spec in declared(type(self)):
            try:
                value = spec.convert(getattr(self, spec.name))
            except ValueError as exc:
                raise OptionError(spec.name, str(exc)) from None
            object.__setattr__(self, spec.name, value)

    def merged(self, changes: Mapping[str, Any], front: Front | None = None) -> Self:
        """A copy with `changes` (each one an option of `front`, when one is named)."""
        unknown = sorted(set(changes) - {o.name for o in declared(type(self), front)})
        if unknown:
            raise OptionError(unknown[0], f"no such option (known: {known(type(self), front)})")
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


@dataclass(frozen=True)
class CampaignOptions(_Declared):
    """How a campaign runs: which scenarios, which engine, in which tier and store, which phases
    of the plan, with which seed, in which slice and over how many processes. The defaults are
    the main job's (`killpoint run`), for every front."""

    # fmt: off
    scenarios: tuple[str, ...] = field(default=(), metadata=option(
        "Scenario to run (repeatable; default every installed one).", names, "run", "mutants",
        metavar="NAME", flag="--scenario", short="-s"))
    engine: str | None = field(default=None, metadata=option(
        "The engine under test: reference, mutant:NAME, an installed engine by its name "
        "(killpoint.engines entry points: langgraph, agent-framework, dbos, temporal, each "
        ":naive or :keyed, or a team's own), module:factory, 'cmd:COMMAND' or "
        "an engine file (FILE.toml) for an engine in any language (default: the reference "
        "engine).", text, *SHARED,
        metavar="ENGINE"))
    tier: Tier = field(default="inprocess", metadata=option(
        "inprocess: injected exceptions; real: forked workers killed by SIGKILL, services over "
        "loopback HTTP.", one_of(*TIERS), *CAMPAIGN, metavar="TIER"))
    db: str | None = field(default=None, metadata=option(
        "Database URL of the stores (sqlite:///PATH or postgresql+psycopg://USER@HOST/DB: a "
        "fresh schema per store unless the URL pins one); default a SQLite file per store.",
        text, "run", "replay", "pytest", metavar="URL", env="KILLPOINT_DATABASE_URL"))
    double: bool = field(default=True, metadata=option(
        "Also crash each recovery.", boolean, *SHARED))
    double_limit: int = field(default=150, metadata=option(
        "Paired crashes per scenario before sampling.", whole(0), *SHARED, metavar="N"))
    interleave: bool = field(default=True, metadata=option(
        "Also let two workers recover each crash at once (in-process tier).", boolean, *SHARED))
    network: bool = field(default=True, metadata=option(
        "Also inject network faults.", boolean, *SHARED))
    named: bool = field(default=True, metadata=option(
        "Also run the named cases the scenarios bring.", boolean, *CAMPAIGN))
    deploys: bool = field(default=True, metadata=option(
        "Also deploy a new version around paused runs, for each strategy (drain, migrate, "
        "coexist), with deaths at the deploy's decision (engines that keep versions).",
        boolean, *CAMPAIGN))
    seed: int = field(default=0, metadata=option(
        "Seed of the paired-crash sample and of the exploration.", whole(), *SHARED,
        metavar="N"))
    explore: str = field(default=EXPLORE, metadata=option(
        "After the plan, explore generated schedules (k crashes, crash with network faults "
        "and read faults on one operation, clock jumps, two workers, redelivery after the "
        "end), new fault combinations first: RUNS per scenario, or SECONDS in all (30s); 0 "
        "for none.", budget,
        *SHARED, metavar="RUNS|SECONDS", text=True))
    operators: bool = field(default=True, metadata=option(
        "Also let an operator apply each control the engine offers to the runs the faults "
        "stopped for a person (its recording's, its named cases', the exploration's), then "
        "crash the worker in and after the control.", boolean, *SHARED))
    shard: tuple[int, int] | None = field(default=None, metadata=option(
        "Run only this slice: every N-th planned run from the i-th.", shard, "run", "marker",
        metavar="i/N", text=True))
    worker_timeout: float = field(default=120.0, metadata=option(
        "Wall seconds a worker may take before the harness kills it as hung (a progress "
        "violation).", seconds, *CAMPAIGN, metavar="SECONDS", text=True))
    jobs: int = field(default=1, metadata=option(
        "Processes to run in (one shard each, merged); auto: one per core.", processes,
        "run", "mutants", metavar="N|auto", text=True))
    lies: bool = field(default=True, metadata=option(
        "Also redeliver start messages that lie (an amount raised, a target changed, another "
        "workflow's input, another tenant's claim, a forged approval) to a sample of the "
        "single crashes and in the exploration.", boolean, *SHARED))
    neighbours: bool = field(default=True, metadata=option(
        "Also run a sample of runs beside neighbours: a second tenant with the same business "
        "keys, another workflow of the tenant at the same gates, in the same store, services "
        "and approval inbox (the plan's riskiest single crashes and gated named cases, and "
        "the exploration's draws).", boolean, *SHARED))
    canaries: bool = field(default=True, metadata=option(
        "Also look for the world's secrets (the sealing key, the services' token) after each "
        "run, in the engine's store, its files and the history (`secrets_kept`).", boolean,
        *SHARED))
    pauses: bool = field(default=True, metadata=option(
        "Also pause the first of two recovering workers right after each place its recovery "
        "can still act stale (an effect's started mark, a read, a reconciling lookup, a "
        "response read), past its lease, while the second takes the run over.", boolean,
        *SHARED))
    real_pass: bool = field(default=True, metadata=option(
        "Also kill a forked worker with SIGKILL (no cleanup, its memory gone) at each boundary "
        "kind where a mutating request had reached a service and at each step's checkpoint "
        "commit: a real-tier pass after the single crashes of an in-process campaign or hunt.",
        boolean, *SHARED))
    # fmt: on


@dataclass(frozen=True)
class SessionOptions(_Declared):
    """What only a pytest session is asked: its report files and a schedule to replay."""

    # fmt: off
    report: Path | None = field(default=None, metadata=option(
        "write the session's HTML report", path, "pytest", metavar="PATH"))
    junit: Path | None = field(default=None, metadata=option(
        "write JUnit XML, one case per boundary", path, "pytest", metavar="PATH"))
    replay: Path | None = field(default=None, metadata=option(
        "re-run exactly this fault schedule (a JSON file) in the killpoint tests whose "
        "scenario it belongs to, instead of their campaigns", path, "pytest", metavar="FILE"))
    # fmt: on


def declared(model: type[Any], front: Front | None = None) -> list[Option]:
    """The options of `model` offered on `front` (all of them without one), in order."""
    return [spec for spec in _TABLES[model] if front is None or front in spec.fronts]


def known(model: type[Any], front: Front | None = None) -> str:
    return ", ".join(spec.name for spec in declared(model, front))


def _bind(model: type[Any]) -> Iterator[Option]:
    hints = get_type_hints(model)
    for f in dataclasses.fields(model):
        spec: Option = f.metadata["option"]
        yield dataclasses.replace(spec, name=f.name, default=f.default, hint=hints[f.name])


_TABLES = {model: tuple(_bind(model)) for model in (CampaignOptions, SessionOptions)}


OPTIONS: dict[str, Option] = {spec.name: spec for spec in _TABLES[CampaignOptions]}
