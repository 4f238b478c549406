"""`killpoint inspect`: a workflow as an operator needs it, one fact per line (or as JSON).

Position, checkpoint (read through the integrity check), lineage and versions, budget, lease,
every effect with the action the dispatcher would take, approvals, artifacts, and why each
blocked transition is blocked — from the reference engine's operator view.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated

import typer

from killpoint.harness.cli._app import app
from killpoint.harness.cli._shared import (
    AtOption,
    DbOption,
    KeyEnvOption,
    checkpoint_key,
    known_services,
    open_store,
)
from killpoint.harness.engine.integrity import DEFAULT_KEY_ENV
from killpoint.harness.engine.operator_view import OperatorView, build_view


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


def render(view: OperatorView) -> list[str]:
    """The text form of the operator view: one fact per line, blocked reasons last."""
    lines = [
        f"workflow {view.workflow_id}  ({view.workflow_name}, tenant {view.tenant})",
        f"  database     {view.database}",
        f"  status       {view.status.value}"
        + (f": {view.status_reason}" if view.status_reason else ""),
        f"  position     state {view.state!r}, sequence {view.sequence}",
        *_checkpoint(view),
        *_budget_and_lease(view),
        *_effects(view),
        *_approvals(view),
        f"  artifacts    {'none' if not view.artifacts else ''}".rstrip(),
    ]
    for art in view.artifacts:
        lines.append(f"    {art.produced_by}: sha256 {art.sha256} {art.media_type} {art.uri}")
    lines.append(f"  next         {', '.join(t.step for t in view.next_transitions) or 'none'}")
    lines.extend(f"  blocked      {reason}" for reason in view.blocked)
    return lines


def _checkpoint(view: OperatorView) -> list[str]:
    cp = view.checkpoint
    if cp is None:
        return ["  checkpoint   none"]
    if not cp.trusted:
        return [f"  checkpoint   #{cp.sequence} REJECTED: {cp.rejected_reason}"]
    assert cp.lineage is not None and cp.versions is not None
    return [
        f"  checkpoint   #{cp.sequence} state {cp.state!r}, schema v{cp.schema_version}, "
        f"integrity verified, committed {_when(cp.created_at, view.at)}",
        f"  lineage      run {cp.lineage.run_id} ({cp.lineage.decision}"
        + (f", parent {cp.lineage.parent_run_id})" if cp.lineage.parent_run_id else ")"),
        f"  versions     plan {cp.versions.plan}, prompt {cp.versions.prompt}, "
        f"model {cp.versions.model_contract}, tools {cp.versions.tool_schema}",
    ]


def _budget_and_lease(view: OperatorView) -> list[str]:
    b, lease = view.budget, view.lease
    return [
        f"  budget       attempts {b.attempts_left}, steps {b.steps_left}, cost {b.cost_left}, "
        f"time {b.time_left_ms / 1000:.0f}s left",
        f"  lease        {lease.owner or 'free'}"
        + (f" until {_when(lease.expires_at, view.at)}" if lease.owner else "")
        + f", fencing token {lease.fencing_token}"
        + (" (live)" if lease.live else ""),
    ]


def _effects(view: OperatorView) -> list[str]:
    lines = [f"  effects      {'none' if not view.effects else ''}".rstrip()]
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
    return lines


def _approvals(view: OperatorView) -> list[str]:
    lines = [f"  approvals    {'none' if not view.approvals else ''}".rstrip()]
    for a in view.approvals:
        expiry = "" if a.expires_at is None else f", expires {_when(a.expires_at, view.at)}"
        state = " EXPIRED" if a.expired else ""
        lines.append(f"    {a.gate}: {a.status}{state} by {a.actor or '—'}{expiry}")
    return lines


def _when(t: float | None, now: float) -> str:
    if t is None:
        return "—"
    stamp = datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    delta = t - now
    return f"{stamp} ({'in ' if delta > 0 else ''}{abs(delta):.0f}s{' ago' if delta <= 0 else ''})"
