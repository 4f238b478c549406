"""`killpoint queue`: every run of the operator's tenant that waits for a person, oldest first.

Needs review, quarantined, budget exhausted, dead-lettered, or waiting for an approval longer
than `--approval-after`; each with its reason, its age, the age of its oldest effect in doubt and
the controls allowed now (`killpoint control …`).
"""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer

from killpoint.harness.cli._app import app
from killpoint.harness.cli._shared import (
    AtOption,
    DbOption,
    JsonOption,
    KeyEnvOption,
    TenantOption,
    checkpoint_key,
    known_services,
    known_workflows,
    open_store,
    operator_tenant,
)
from killpoint.reference.integrity import DEFAULT_KEY_ENV
from killpoint.reference.operator_queue import (
    APPROVAL_AFTER_S,
    REASONS,
    QueueEntry,
    operator_queue,
)
from killpoint.reference.settings import DEFAULT_TENANT


@app.command()
def queue(
    db: DbOption = None,
    tenant: TenantOption = DEFAULT_TENANT,
    reason: Annotated[
        list[str] | None,
        typer.Option(
            "--reason",
            metavar="REASON",
            help=f"Only runs queued for this reason (repeatable): {', '.join(REASONS)}.",
            show_default=False,
        ),
    ] = None,
    older_than: Annotated[
        float,
        typer.Option("--older-than", metavar="SECONDS", min=0, help="Only runs queued this long."),
    ] = 0.0,
    approval_after: Annotated[
        float,
        typer.Option(
            "--approval-after",
            metavar="SECONDS",
            min=0,
            help="An unanswered approval joins the queue after this long.",
        ),
    ] = APPROVAL_AFTER_S,
    key_env: KeyEnvOption = DEFAULT_KEY_ENV,
    as_json: JsonOption = False,
    at: AtOption = None,
) -> None:
    """List the runs that wait for a person, oldest first, with the controls allowed now."""
    tenant = operator_tenant(tenant)
    store = open_store(db)
    try:
        entries = operator_queue(
            store,
            tenant=tenant,
            now=time.time() if at is None else at,
            key=checkpoint_key(key_env),
            reasons=reason,
            older_than_s=older_than,
            approval_after_s=approval_after,
            services=known_services(),
            workflows=known_workflows(),
        )
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
        return
    typer.echo("\n".join(render(entries, tenant)))


def render(entries: list[QueueEntry], tenant: str) -> list[str]:
    """One line per run (age, reason, workflow, controls), its reason's detail below it."""
    if not entries:
        return [f"no run of tenant {tenant!r} waits for a person"]
    lines = [f"{len(entries)} run(s) of tenant {tenant!r} wait for a person, oldest first:"]
    for e in entries:
        doubt = (
            ""
            if e.oldest_unresolved_age_s is None
            else f", effect in doubt for {e.oldest_unresolved_age_s:.0f}s"
        )
        lines.append(
            f"  {e.age_s:>8.0f}s  {e.reason:<16} {e.workflow_id} ({e.workflow_name}, state "
            f"{e.state!r}{doubt})  controls: {', '.join(e.controls) or 'none'}"
        )
        lines.append(f"            {e.detail}")
    return lines
