"""The pytest plugin's options, generated from `CampaignOptions` and `SessionOptions`, the
marker's arguments, and what a test's campaign leaves for the session (`Campaigned`): what the
plugin and its campaigns (`_campaigns`) both need, so neither imports the other.

Each option offered to pytest is `--killpoint-<name>`, ini `killpoint_<name>` and environment
variable `KILLPOINT_<NAME>` (the database keeps `KILLPOINT_DATABASE_URL`); the command line
beats the environment, which beats the ini, and a marker's arguments beat all three. Like the
plugin itself this module loads with pytest and the standard library only.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from killpoint.harness.options import (
    CampaignOptions,
    Option,
    OptionError,
    SessionOptions,
    declared,
)

if TYPE_CHECKING:
    from killpoint.harness.results import CampaignResult

# The marker's (and the fixture's) arguments: the campaign options it offers, and its own two.
MARKER_ORDER = (
    "scenario",
    *(spec.name for spec in declared(CampaignOptions, "marker")),
    "fail_on_violation",
)
MARKER_ARGS = frozenset(MARKER_ORDER)


@dataclass
class Campaigned:
    """A campaign a test ran, and whether its violations were the test's to judge."""

    test: str  # node id
    result: CampaignResult
    enforced: bool  # fail_on_violation: its violations fail the test
    test_failed: bool = False  # the test's body failed (set after it ran)

    @property
    def expected(self) -> bool:
        """A broken engine caught as its test expected: violations the test did not enforce,
        and a test that passed (having asserted them). A failed test's violations stay
        violations of the session."""
        return not self.enforced and not self.test_failed and bool(self.result.violations)


WORKER_SEED = "killpoint_seed"  # key in xdist's workerinput
SEED_CACHE = "killpoint/seed"
# What the plugin adds to an option's own help: the values only a pytest session understands.
NOTES = {
    "db": "; 'docker' starts a testcontainers PostgreSQL",
    "seed": ": N, 'random' or 'last'",
}


@dataclass(frozen=True)
class Settings:
    """The session's options (`CampaignOptions` and `SessionOptions`) and where each given one
    came from: `--killpoint-<name>`, `KILLPOINT_<NAME>` or `ini killpoint_<name>`."""

    campaign: CampaignOptions
    session: SessionOptions
    sources: Mapping[str, str] = field(default_factory=dict)


def specs() -> list[Option]:
    return declared(CampaignOptions, "pytest") + declared(SessionOptions, "pytest")


def add_options(parser: pytest.Parser) -> None:
    """`--killpoint-<name>` and ini `killpoint_<name>` for each option (`--killpoint-no-<name>`
    too for a switch); the help says which environment variable and ini value it reads."""
    group = parser.getgroup("killpoint", "killpoint crash campaigns")
    for spec in specs():
        text = spec.help[0].lower() + spec.help[1:].rstrip(".") + NOTES.get(spec.name, "")
        where = f" [env {spec.env_var}, ini {spec.ini}]"
        dest = f"killpoint_{spec.name}"
        if spec.hint is bool:
            shown = f"{text} (default {'on' if spec.default else 'off'}){where}"
            group.addoption(spec.pytest_flag, dest=dest, action="store_true", default=None,
                            help=shown)  # fmt: skip
            off = "--killpoint-no-" + spec.pytest_flag.removeprefix("--killpoint-")
            group.addoption(off, dest=dest, action="store_false", help=f"not {spec.pytest_flag}")
        else:
            default = "" if spec.default is None else f" (default {spec.default})"
            group.addoption(spec.pytest_flag, dest=dest, metavar=spec.metavar, default=None,
                            help=text + default + where)  # fmt: skip
        parser.addini(spec.ini, text, default="")


def _setting(config: pytest.Config, spec: Option) -> tuple[object, str]:
    """The value given for one option and where: the command line, the environment, the ini."""
    given = config.getoption(f"killpoint_{spec.name}")
    if given is not None:
        return given, spec.pytest_flag
    if os.environ.get(spec.env_var):
        return os.environ[spec.env_var], spec.env_var
    value = str(config.getini(spec.ini) or "")
    return (value, f"ini {spec.ini}") if value else (None, "")


def settings_of(config: pytest.Config) -> Settings:
    """The session's options: the command line beats the environment, which beats the ini."""
    given: dict[str, object] = {}
    sources: dict[str, str] = {}
    for spec in specs():
        value, source = _setting(config, spec)
        if value is not None:
            given[spec.name], sources[spec.name] = value, source
    given["seed"] = _seed(config, given.get("seed"))
    campaign = {s.name for s in declared(CampaignOptions)}
    here = Path(config.invocation_params.dir)
    try:
        options = CampaignOptions().merged({k: v for k, v in given.items() if k in campaign})
        session = SessionOptions().merged({k: v for k, v in given.items() if k not in campaign})
    except OptionError as exc:
        raise pytest.UsageError(f"{sources.get(exc.name, exc.name)} {exc.message}") from None
    paths = {name: here / path for name, path in vars(session).items() if path is not None}
    cache = getattr(config, "cache", None)
    if cache is not None and not hasattr(config, "workerinput"):
        cache.set(SEED_CACHE, options.seed)
    return Settings(options, session.merged(paths), sources)


def _seed(config: pytest.Config, given: object) -> object:
    """The campaign seed; workers take the controller's, so 'random' is one seed per session,
    and 'last' is the seed of the session before."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and WORKER_SEED in workerinput:
        return int(workerinput[WORKER_SEED])
    cache = getattr(config, "cache", None)
    if given == "last":
        return int(cache.get(SEED_CACHE, 0)) if cache is not None else 0
    if given == "random":
        return random.SystemRandom().randrange(2**31)
    return 0 if given is None else given
