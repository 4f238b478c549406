"""A command's campaign flags, generated from `CampaignOptions` rather than written out.

`@with_options("run")` gives a command one typer parameter per option offered on that front
(its flag, type, default, help and metavar all from the field) and calls it with them gathered
into one validated `CampaignOptions`; the command declares only what is its own (outputs).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_origin

import typer

from killpoint.contract.errors import KillpointError
from killpoint.harness.options import OPTIONS, CampaignOptions, Front, Option, OptionError, declared

Command = Callable[..., None]


def with_options(front: Front, without: tuple[str, ...] = ()) -> Callable[[Command], Command]:
    """Decorate `command(options: CampaignOptions, *, own flags…)` with the flags of `front`,
    but those `without` names (a command that shares a front's options but one)."""

    def decorate(command: Command) -> Command:
        own = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in inspect.signature(command, eval_str=True).parameters.values()
            if p.name != "options"
        ]
        offered = [s for s in declared(CampaignOptions, front) if s.name not in without]
        generated = [parameter(spec) for spec in offered]
        names = {p.name for p in generated}

        @functools.wraps(command)
        def wrapper(**values: Any) -> None:
            given = {name: values.pop(name) for name in names}
            command(options_from(given), **values)

        params = generated + own
        wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper

    return decorate


def options_from(given: dict[str, Any]) -> CampaignOptions:
    """The options of the flags given (None: left at its default); a bad value is a user
    error naming its flag."""
    try:
        return CampaignOptions().merged({k: v for k, v in given.items() if v is not None})
    except OptionError as exc:
        raise KillpointError(f"{OPTIONS[exc.name].cli_flag} {exc.message}") from None


def parameter(spec: Option) -> inspect.Parameter:
    """The typer parameter of one option: a `--x/--no-x` switch for a boolean, a repeatable
    flag for names, text for what `convert` reads (`i/N`, `N|auto`), else the field's type."""
    decls = [spec.cli_flag]
    kind: Any = spec.hint
    default = spec.default
    if spec.hint is bool:
        decls = [f"{spec.cli_flag}/--no-{spec.cli_flag.removeprefix('--')}"]
    elif spec.text:
        kind, default = str | None, None if default is None else str(default)
    elif spec.hint == tuple[str, ...]:
        kind, default = list[str] | None, None
    elif get_origin(spec.hint) is not Literal and spec.hint not in (int, str | None):
        raise TypeError(f"no command-line form for option {spec.name}: {spec.hint}")
    if spec.short:
        decls.append(spec.short)
    shown = default is not None
    info = typer.Option(*decls, metavar=spec.metavar, help=spec.help, show_default=shown)
    return inspect.Parameter(
        spec.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, info]
    )
