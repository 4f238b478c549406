"""The `killpoint` app: one typer group whose user errors end as one line and exit status 2."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from sqlalchemy.exc import SQLAlchemyError
from typer.core import TyperGroup

from killpoint.contract.errors import KillpointError

USER_ERROR = 2


def fail(message: str) -> None:
    """Print one line on stderr and exit 2: how every user error ends."""
    typer.echo(f"killpoint: {' '.join(message.split())}", err=True)
    sys.exit(USER_ERROR)


class _Group(TyperGroup):
    """Turns user errors (bad flags, `KillpointError`) into one line and exit status 2."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            code = super().main(
                args,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
        except typer.Abort:
            typer.echo("Aborted!", err=True)
            code = 1
        except typer.TyperException as exc:  # usage errors: unknown flag, bad value …
            fail(exc.format_message() if hasattr(exc, "format_message") else str(exc))
        except KillpointError as exc:
            fail(str(exc))
        except SQLAlchemyError as exc:
            fail(f"database error: {str(exc).splitlines()[0]}")
        if standalone_mode:
            sys.exit(code if isinstance(code, int) else 0)
        return code


app = typer.Typer(
    cls=_Group,
    name="killpoint",
    help="Kill an agent's worker at every boundary, resume it, and prove it stayed safe.",
    invoke_without_command=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


def main() -> None:
    """The `killpoint` console script."""
    app()
