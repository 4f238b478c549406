"""`killpoint compact`: drop old checkpoint rows, keeping each latest and every effect row."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from killpoint.harness.cli._app import app
from killpoint.harness.cli._shared import AtOption, DbOption, open_store


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
