"""`killpoint compact`: drop one tenant's old checkpoint rows, keeping each latest and every
effect row; another tenant's rows are not this operator's to drop."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from killpoint.harness.cli._app import app
from killpoint.harness.cli._shared import (
    AtOption,
    DbOption,
    TenantOption,
    open_store,
    operator_tenant,
)
from killpoint.reference.settings import DEFAULT_TENANT


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
    tenant: TenantOption = DEFAULT_TENANT,
    at: AtOption = None,
) -> None:
    """Drop one tenant's old checkpoint rows; keep each latest checkpoint and every effect row."""
    tenant = operator_tenant(tenant)
    store = open_store(db)
    try:
        dropped = store.compact(time.time() if at is None else at, keep_window, tenant=tenant)
    finally:
        store.close()
    typer.echo(
        f"dropped {dropped} checkpoint row(s) of tenant {tenant!r} older than {keep_window:g}s "
        f"from {store.url_for_humans}; latest checkpoints and all effect receipts kept"
    )
