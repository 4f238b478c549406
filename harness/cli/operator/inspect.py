"""`killpoint inspect`: a workflow as an operator needs it, one fact per line (or as JSON).

Position, checkpoint (read through the integrity check), lineage and versions, budget, lease,
every effect with the action the dispatcher would take, approvals, artifacts, and why each
blocked transition is blocked — from the reference engine's operator view, for one tenant.
Only the checkpoint's sealed body is shown as verified; each line read from the store's
unsealed rows says so, and each place those rows contradict the seal is an ANOMALY line.
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
    TenantOption,
    checkpoint_key,
    known_services,
    known_workflows,
    open_store,
    operator_tenant,
)
from killpoint.reference.checkpoint import SCHEMA_VERSION
from killpoint.reference.integrity import DEFAULT_KEY_ENV
from killpoint.reference.operator_model import OperatorView
from killpoint.reference.operator_view import build_view
from killpoint.reference.settings import DEFAULT_TENANT

ROW = "(workflow row, unsealed)"  # the label of every line read from the workflow row


@app.command()
def inspect(
    workflow_id: Annotated[str, typer.Argument(help="The workflow to show.")],
    db: DbOption = None,
    key_env: KeyEnvOption = DEFAULT_KEY_ENV,
    tenant: TenantOption = DEFAULT_TENANT,
    as_json: Annotated[bool, typer.Option("--json", help="Print the view as JSON.")] = False,
    at: AtOption = None,
) -> None:
    """Show a workflow as an operator needs it: position, unresolved effects, what blocks it."""
    tenant = operator_tenant(tenant)
    store = open_store(db)
    try:
        # an unknown workflow, or another tenant's, is reported before anything else
        store.workflow(workflow_id, tenant=tenant)
        key = checkpoint_key(key_env)
        view = build_view(
            store,
            workflow_id,
            key=key,
            now=time.time() if at is None else at,
            tenant=tenant,
            services=known_services(),
            workflows=known_workflows(),
        )
    finally:
        store.close()
    if as_json:
        typer.echo(view.model_dump_json(indent=2))
    else:
        typer.echo("\n".join(render(view)))


def render(view: OperatorView) -> list[str]:
    """The text form of the operator view: one fact per line, anomalies first, blocks last."""
    reason = f": {view.status_reason}" if view.status_reason else ""
    lines = [
        f"workflow {view.workflow_id}  ({view.workflow_name}, tenant {view.tenant})",
        f"  database     {view.database}",
        *(f"  ANOMALY      {a.detail}" for a in view.anomalies),
        f"  status       {view.status.value}{reason}  {ROW}",
        f"  position     state {view.state!r}, sequence {view.sequence}  {ROW}",
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
    lines.append(f"  controls     {', '.join(view.controls) or 'none allowed now'}")
    lines.extend(f"    refused {c}: {why}" for c, why in view.refused_controls.items())
    return lines


def _checkpoint(view: OperatorView) -> list[str]:
    cp = view.checkpoint
    if cp is None:
        return ["  checkpoint   none"]
    if cp.sealed is None:
        which = "latest row" if cp.row is None else f"#{cp.row.sequence}"
        return [f"  checkpoint   {which} REJECTED: {cp.rejected_reason}"]
    s = cp.sealed
    migrated = f" (migrated to v{SCHEMA_VERSION})" if s.migrated else ""
    return [
        f"  checkpoint   #{s.sequence} state {s.state!r}, schema v{s.schema_version}{migrated}, "
        f"sealed, integrity verified, committed {_when(s.created_at, view.at)}",
        f"  lineage      run {s.lineage.run_id} ({s.lineage.decision}"
        + (f", parent {s.lineage.parent_run_id})" if s.lineage.parent_run_id else ")"),
        f"  versions     plan {s.versions.plan}, prompt {s.versions.prompt}, "
        f"model {s.versions.model_contract}, tools {s.versions.tool_schema}",
    ]


def _budget_and_lease(view: OperatorView) -> list[str]:
    b, lease = view.budget, view.lease
    return [
        f"  budget       attempts {b.attempts_left}, steps {b.steps_left}, cost {b.cost_left}, "
        f"time {b.time_left_ms / 1000:.0f}s left  {ROW}",
        f"  lease        {lease.owner or 'free'}"
        + (f" until {_when(lease.expires_at, view.at)}" if lease.owner else "")
        + f", fencing token {lease.fencing_token}"
        + (" (live)" if lease.live else "")
        + f"  {ROW}",
    ]


def _effects(view: OperatorView) -> list[str]:
    lines = [f"  effects      {'ledger rows, unsealed:' if view.effects else 'none'}"]
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
    lines = [f"  approvals    {'approval rows, unsealed:' if view.approvals else 'none'}"]
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
