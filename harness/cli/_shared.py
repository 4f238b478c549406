"""What several commands share: the operator tools' store options, the checkpoint key, folders."""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import typer
from sqlalchemy import make_url
from sqlalchemy.exc import SQLAlchemyError

from killpoint.contract.adapters import Capabilities
from killpoint.contract.errors import KillpointError
from killpoint.contract.workflow import Workflow
from killpoint.harness.catalogue import installed
from killpoint.reference import resolve_url
from killpoint.reference.integrity import DEFAULT_KEY_ENV, MIN_KEY_BYTES, check_key
from killpoint.reference.store import Store

# The operator tools (`inspect`, `compact`, `demo`) open one existing store; a campaign's own
# `--db` (where its stores go) is a campaign option (`killpoint.harness.options`).
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
AtOption = Annotated[
    float | None,
    typer.Option(
        "--at",
        metavar="EPOCH",
        help="Judge leases, expiry and ages at this epoch time instead of now.",
        show_default=False,
    ),
]
TenantOption = Annotated[
    str,
    typer.Option(
        "--tenant",
        envvar="KILLPOINT_TENANT",
        metavar="NAME",
        help="The tenant you act for: another tenant's workflow is refused and left alone; "
        "default $KILLPOINT_TENANT, else the engine's 'default' tenant.",
    ),
]
WorkdirOption = Annotated[
    Path,
    typer.Option(
        "--workdir", metavar="DIR", help="Where stores, artifacts and failing schedules go."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="No progress on stderr: only the summary and errors.",
        show_default=False,
    ),
]
WORKDIR = Path("killpoint-out")


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


def operator_tenant(tenant: str) -> str:
    """The tenant an operator command acts for; a blank name is a user error, not a tenant."""
    if not tenant.strip():
        raise KillpointError("--tenant must name a tenant (or set $KILLPOINT_TENANT)")
    return tenant


# What a random key of this process means, by what the command does with its store. A
# campaign's (and a replay's) stores are scratch, sealed and read by this process and the
# workers it forks: nothing to say.
KeyUse = Literal["scratch", "reads", "keeps"]
_UNSET_MEANS = {
    "reads": "checks seals with a random key for this process only, so checkpoints written "
    "by another process show as REJECTED (export the key their writer used)",
    "keeps": "seals its checkpoints with a random key for this process only, so a later "
    "`killpoint inspect` shows them as REJECTED (to inspect them, first export a key, e.g. "
    "`export {env}=$(openssl rand -hex 32)`)",
}


def checkpoint_key(
    env: str = DEFAULT_KEY_ENV, *, allow_weak: bool = False, use: KeyUse = "reads"
) -> bytes:
    """The key from `$env`; if unset, a random one for this process only, said where that
    matters: a store another process sealed (`reads`, inspect) or one left for another process
    to read (`keeps`, the demo). A short key is refused (one line) unless `allow_weak` (the
    demo), which only warns."""
    value = os.environ.get(env)
    if value and not allow_weak:
        check_key(value.encode(), env)
    elif value and len(value.encode()) < MIN_KEY_BYTES:
        typer.echo(f"killpoint: ${env} is a weak key (demo use only)", err=True)
    if not value:
        value = secrets.token_hex(32)
        os.environ[env] = value  # so the engine's SecretRef finds it; lives only in this process
        if use != "scratch":
            means = _UNSET_MEANS[use].format(env=env)
            typer.echo(f"killpoint: ${env} is unset: this command {means}", err=True)
    return value.encode()


def known_services() -> Mapping[str, Capabilities]:
    """Recovery flags of the services the installed catalogues ship adapters for."""
    return installed().services


def known_workflows() -> Mapping[str, Workflow]:
    """The workflows of the installed catalogues' scenarios, by name (what a control needs to
    know a run's gates and compensating steps)."""
    return {s.workflow.name: s.workflow for s in installed().scenarios.values()}


def fresh_folder(root: Path, kind: str) -> Path:
    """A new folder `<kind>-<time>-…` under `root`: every campaign needs empty stores."""
    root.mkdir(parents=True, exist_ok=True)
    prefix = f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=root))
