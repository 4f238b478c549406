"""`killpoint control …`: the narrow manual controls, one subcommand each (seed 000).

reconcile, retry (with the same key), compensate, request-approval, branch, terminate; no
force-complete. Each acts on one workflow of the operator's tenant through a worker of the
reference engine built here (the installed catalogues' workflows and adapters), so it takes the
lease like any worker, is refused with the rule's reason, and leaves an audit row. reconcile
and retry talk to the services, at `--services URL`; the others touch only the store.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated

import httpx
import typer

from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.clock import Clock, FakeClock, SystemClock
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import Versions
from killpoint.harness.catalogue import installed
from killpoint.harness.cli._app import app
from killpoint.harness.cli._shared import (
    AtOption,
    DbOption,
    JsonOption,
    KeyEnvOption,
    TenantOption,
    checkpoint_key,
    known_workflows,
    open_store,
    operator_tenant,
)
from killpoint.reference.controls import Controls
from killpoint.reference.dispatcher import Engine
from killpoint.reference.integrity import DEFAULT_KEY_ENV, SecretRef
from killpoint.reference.settings import DEFAULT_TENANT, Settings
from killpoint.reference.store import Store

control_app = typer.Typer(
    help="Act on a run that waits for a person: narrow controls, fenced and audited.",
    no_args_is_help=True,
)
app.add_typer(control_app, name="control")

SERVICES_ENV = "KILLPOINT_SERVICES_URL"
TALKS = ("reconcile", "retry")  # the controls that ask or call a service
Workflow = Annotated[str, typer.Argument(help="The workflow to act on.")]
Reason = Annotated[
    str, typer.Option("--reason", metavar="TEXT", help="Why you act (kept in the audit).")
]
Actor = Annotated[
    str,
    typer.Option(
        "--actor",
        envvar="KILLPOINT_ACTOR",
        metavar="NAME",
        help="Who acts (kept in the audit); default $KILLPOINT_ACTOR.",
    ),
]
ServicesUrl = Annotated[
    str | None,
    typer.Option(
        "--services",
        envvar=SERVICES_ENV,
        metavar="URL",
        help=f"Base URL of the services (reconcile and retry ask them); default ${SERVICES_ENV}.",
        show_default=False,
    ),
]


def act(
    control: str,
    workflow_id: str,
    *,
    reason: str,
    actor: str,
    db: str | None,
    tenant: str,
    key_env: str,
    services: str | None,
    at: float | None,
    as_json: bool,
    gate: str | None = None,
) -> None:
    """Build a worker for the operator, run one control, print what it left."""
    tenant = operator_tenant(tenant)
    if control in TALKS and not services:
        raise KillpointError(
            f"{control} asks the services: give --services URL (or ${SERVICES_ENV})"
        )
    store = open_store(db)
    http = httpx.Client(base_url=services or "http://services.invalid", timeout=5.0)
    scratch = tempfile.TemporaryDirectory(prefix="killpoint-control-")  # no control writes one
    try:
        store.workflow(workflow_id, tenant=tenant)  # unknown, or another tenant's: first
        checkpoint_key(key_env)
        clock: Clock = SystemClock() if at is None else FakeClock(at)
        settings = Settings(tenant=tenant, secret=SecretRef(key_env))
        ops = Controls(_worker(store, http, clock, settings, Path(scratch.name)), actor)
        options = {"gate": gate} if gate else {}
        outcome = ops.act(control, workflow_id, reason, **options)
    finally:
        scratch.cleanup()
        http.close()
        store.close()
    if as_json:
        fields = ("workflow_id", "status", "state", "sequence", "reason")
        typer.echo(
            json.dumps({"control": control, **{f: str(getattr(outcome, f)) for f in fields}})
        )
        return
    typer.echo(
        f"{control} by {actor} on {workflow_id}: now {outcome.status.value} at state "
        f"{outcome.state!r}, checkpoint #{outcome.sequence}: {outcome.reason}"
    )


def _worker(
    store: Store, http: httpx.Client, clock: Clock, settings: Settings, scratch: Path
) -> Engine:
    """A worker of every installed workflow, its adapters on `http` (the services' URL)."""
    adapters: dict[str, EffectAdapter] = {}
    for scenario in installed().scenarios.values():
        adapters.update(scenario.make_adapters(http))
    workflows = known_workflows()
    versions = Versions(plan="operator", prompt="operator", model_contract="-", tool_schema="-")
    return Engine(
        store,
        [w for w in workflows.values() if w.services <= set(adapters)],
        adapters,
        artifacts=FolderArtifacts(scratch),
        clock=clock,
        versions=versions,
        settings=settings,
    )


def _register(control: str, doc: str) -> None:
    def command(
        workflow_id: Workflow,
        reason: Reason,
        actor: Actor,
        db: DbOption = None,
        tenant: TenantOption = DEFAULT_TENANT,
        key_env: KeyEnvOption = DEFAULT_KEY_ENV,
        services: ServicesUrl = None,
        at: AtOption = None,
        as_json: JsonOption = False,
    ) -> None:
        act(
            control,
            workflow_id,
            reason=reason,
            actor=actor,
            db=db,
            tenant=tenant,
            key_env=key_env,
            services=services,
            at=at,
            as_json=as_json,
        )

    command.__doc__ = doc
    control_app.command(name=control)(command)


for _name, _doc in (
    ("reconcile", "Ask the service now, by key, about every effect in doubt."),
    ("retry", "Send every effect in doubt again with its same key (where the service dedups)."),
    ("compensate", "Send the run to its compensating step; the next worker runs it."),
    ("branch", "Start a new lineage from the last committed checkpoint."),
    ("terminate", "End the run, failed, with your reason."),
):
    _register(_name, _doc)


@control_app.command(name="request-approval")
def request_approval(
    workflow_id: Workflow,
    reason: Reason,
    actor: Actor,
    gate: Annotated[
        str | None, typer.Option("--gate", metavar="GATE", help="The gate (if not the only one).")
    ] = None,
    db: DbOption = None,
    tenant: TenantOption = DEFAULT_TENANT,
    key_env: KeyEnvOption = DEFAULT_KEY_ENV,
    at: AtOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke the gate's grant, request it again and send the run back to the gate."""
    act(
        "request-approval",
        workflow_id,
        reason=reason,
        actor=actor,
        db=db,
        tenant=tenant,
        key_env=key_env,
        services=None,
        at=at,
        as_json=as_json,
        gate=gate,
    )
