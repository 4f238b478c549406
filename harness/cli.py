"""The `killpoint` command line: a thin layer over the engine's public API.

Adding a command: write `harness/cli_<name>.py` that does `from harness.cli import app` and
decorates a function with `@app.command()`; every such module is imported when this one is, so
nothing here needs editing. Use `DbOption`, `KeyEnvOption`, `open_store` and `checkpoint_key`
for the shared options. Raise `KillpointError` for anything the user got wrong: the app prints
it as one line on stderr and exits with status 2, never with a traceback.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import secrets
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from sqlalchemy import make_url
from sqlalchemy.exc import SQLAlchemyError
from typer.core import TyperGroup

from killpoint.harness.catalogue import installed
from killpoint.harness.contract.adapters import Capabilities
from killpoint.harness.contract.errors import KillpointError
from killpoint.harness.engine.integrity import DEFAULT_KEY_ENV
from killpoint.harness.engine.operator_view import OperatorView, build_view
from killpoint.harness.engine.store import Store, resolve_url

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

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="URL",
        help="Database URL (sqlite:///PATH or postgresql+psycopg://USER@HOST/DB); "
        "default $KILLPOINT_DATABASE_URL, else killpoint-out/killpoint.sqlite.",
        show_default=False,
    ),
]
KeyEnvOption = Annotated[
    str,
    typer.Option(
        "--key-env",
        metavar="NAME",
        help="Environment variable holding the checkpoint HMAC key (never stored).",
    ),
]


@app.callback()
def _root(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


AtOption = Annotated[
    float | None,
    typer.Option(
        "--at",
        metavar="EPOCH",
        help="Judge leases, expiry and ages at this epoch time instead of now.",
        show_default=False,
    ),
]


def main() -> None:
    """The `killpoint` console script."""
    app()


def open_store(url: str | None, *, must_exist: bool = True) -> Store:
    """The store at `url` (resolved as the engine does); a missing SQLite file is an error."""
    resolved = resolve_url(url)
    parsed = make_url(resolved)
    if must_exist and parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database not in ("", ":memory:") and not os.path.exists(database):
            raise KillpointError(f"no database at {database} (run `killpoint demo` first?)")
    try:
        return Store(resolved)
    except SQLAlchemyError as exc:
        shown = parsed.render_as_string(hide_password=True)
        raise KillpointError(f"cannot open {shown}: {str(exc).splitlines()[0]}") from exc


def checkpoint_key(env: str = DEFAULT_KEY_ENV) -> bytes:
    """The key from `$env`; if unset, a random one for this process only, and say so."""
    value = os.environ.get(env)
    if not value:
        value = secrets.token_hex(32)
        os.environ[env] = value  # so the engine's SecretRef finds it; lives only in this process
        typer.echo(
            f"killpoint: ${env} is unset; using a random key for this process only "
            "(checkpoints sealed by other processes will show as rejected)",
            err=True,
        )
    return value.encode()


@app.command()
def inspect(
    workflow_id: Annotated[str, typer.Argument(help="The workflow to show.")],
    db: DbOption = None,
    key_env: KeyEnvOption = DEFAULT_KEY_ENV,
    tenant: Annotated[
        str | None,
        typer.Option(help="Expected tenant; default: the workflow's own.", show_default=False),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the view as JSON.")] = False,
    at: AtOption = None,
) -> None:
    """Show a workflow as an operator needs it: position, unresolved effects, what blocks it."""
    store = open_store(db)
    try:
        store.workflow(workflow_id)  # an unknown workflow is reported before anything else
        key = checkpoint_key(key_env)
        view = build_view(
            store,
            workflow_id,
            key=key,
            now=time.time() if at is None else at,
            tenant=tenant,
            services=known_services(),
        )
    finally:
        store.close()
    if as_json:
        typer.echo(view.model_dump_json(indent=2))
    else:
        typer.echo("\n".join(render(view)))


@app.command()
def compact(
    keep_window: Annotated[
        float,
        typer.Option(
            "--keep-window",
            metavar="SECONDS",
            min=0,
            help="Keep checkpoints younger than this; older ones go, except each latest.",
        ),
    ],
    db: DbOption = None,
    at: AtOption = None,
) -> None:
    """Drop old checkpoint rows; keep every workflow's latest checkpoint and every effect row."""
    store = open_store(db)
    try:
        dropped = store.compact(time.time() if at is None else at, keep_window)
    finally:
        store.close()
    typer.echo(
        f"dropped {dropped} checkpoint row(s) older than {keep_window:g}s from "
        f"{store.url_for_humans}; latest checkpoints and all effect receipts kept"
    )


def known_services() -> Mapping[str, Capabilities]:
    """Recovery flags of the services the installed catalogues ship adapters for."""
    return installed().services


def _when(t: float | None, now: float) -> str:
    if t is None:
        return "—"
    stamp = datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    delta = t - now
    return f"{stamp} ({'in ' if delta > 0 else ''}{abs(delta):.0f}s{' ago' if delta <= 0 else ''})"


def render(view: OperatorView) -> list[str]:
    """The text form of the operator view: one fact per line, blocked reasons last."""
    cp = view.checkpoint
    lines = [
        f"workflow {view.workflow_id}  ({view.workflow_name}, tenant {view.tenant})",
        f"  database     {view.database}",
        f"  status       {view.status.value}"
        + (f": {view.status_reason}" if view.status_reason else ""),
        f"  position     state {view.state!r}, sequence {view.sequence}",
    ]
    if cp is None:
        lines.append("  checkpoint   none")
    elif not cp.trusted:
        lines.append(f"  checkpoint   #{cp.sequence} REJECTED: {cp.rejected_reason}")
    else:
        assert cp.lineage is not None and cp.versions is not None
        lines += [
            f"  checkpoint   #{cp.sequence} state {cp.state!r}, schema v{cp.schema_version}, "
            f"integrity verified, committed {_when(cp.created_at, view.at)}",
            f"  lineage      run {cp.lineage.run_id} ({cp.lineage.decision}"
            + (f", parent {cp.lineage.parent_run_id})" if cp.lineage.parent_run_id else ")"),
            f"  versions     plan {cp.versions.plan}, prompt {cp.versions.prompt}, "
            f"model {cp.versions.model_contract}, tools {cp.versions.tool_schema}",
        ]
    b = view.budget
    lines.append(
        f"  budget       attempts {b.attempts_left}, steps {b.steps_left}, cost {b.cost_left}, "
        f"time {b.time_left_ms / 1000:.0f}s left"
    )
    lease = view.lease
    lines.append(
        f"  lease        {lease.owner or 'free'}"
        + (f" until {_when(lease.expires_at, view.at)}" if lease.owner else "")
        + f", fencing token {lease.fencing_token}"
        + (" (live)" if lease.live else "")
    )
    lines.append(f"  effects      {'none' if not view.effects else ''}".rstrip())
    for e in view.effects:
        receipt = e.receipt.resource_id if e.receipt else "none"
        flag = "UNRESOLVED " if e.unresolved else ""
        lines.append(
            f"    {flag}{e.operation_id} on {e.service}: {e.status.value}, "
            f"attempts {e.attempts}, key {e.idempotency_key}, receipt {receipt}"
        )
        if e.reason:
            lines.append(f"      last: {e.reason}")
        if e.action != "none":
            lines.append(f"      action: {e.action} — {e.action_detail}")
    lines.append(f"  approvals    {'none' if not view.approvals else ''}".rstrip())
    for a in view.approvals:
        expiry = "" if a.expires_at is None else f", expires {_when(a.expires_at, view.at)}"
        state = " EXPIRED" if a.expired else ""
        lines.append(f"    {a.gate}: {a.status}{state} by {a.actor or '—'}{expiry}")
    lines.append(f"  artifacts    {'none' if not view.artifacts else ''}".rstrip())
    for art in view.artifacts:
        lines.append(f"    {art.produced_by}: sha256 {art.sha256} {art.media_type} {art.uri}")
    nxt = ", ".join(t.step for t in view.next_transitions) or "none"
    lines.append(f"  next         {nxt}")
    for reason in view.blocked:
        lines.append(f"  blocked      {reason}")
    return lines


def _load_command_modules() -> None:
    from killpoint import harness
    for module in pkgutil.iter_modules(harness.__path__):
        if module.name.startswith("cli_"):
            importlib.import_module(f"killpoint.harness.{module.name}")


_load_command_modules()
