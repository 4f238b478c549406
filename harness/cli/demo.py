"""`killpoint demo`: one workflow, one crash in the lost-response window, one safe resume.

A small workflow (draft → create a post on the fake CMS → verify it) runs against the store and
the in-process fake CMS. The product's kill-switch kills the worker after the CMS committed the
post and before the receipt reached the ledger — the window where a naive engine posts twice. A
new worker resumes, reconciles by looking the post up, verifies it, and the CMS's own journal
shows one post.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import uuid4

import httpx
import typer
from pydantic import JsonValue

from killpoint.contract import boundaries as b
from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.clock import FakeClock
from killpoint.contract.context import StepContext
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import EffectIntent, Outcome, RunStatus, Versions
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.catalogue import installed
from killpoint.harness.cli._app import app
from killpoint.harness.cli._shared import DbOption, checkpoint_key, known_services, open_store
from killpoint.harness.cli.operator.inspect import render
from killpoint.harness.run.killswitch import Killed, KillSwitch
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.reference.dispatcher import Engine
from killpoint.reference.integrity import DEFAULT_KEY_ENV, SecretRef
from killpoint.reference.operator_view import build_view
from killpoint.reference.settings import DEFAULT_TENANT, Settings
from killpoint.reference.store import Store

if TYPE_CHECKING:
    from killpoint.fake_services import InProcessServices

LEASE_TTL = 30.0
VERSIONS = Versions(
    plan="demo-publish@1", prompt="writer@1", model_contract="draft-v1", tool_schema="cms@1"
)
# The lost-response window: the CMS has committed the post, the receipt is not in the ledger.
AFTER_COMMIT = HitPoint(worker=0, step="create_post", boundary=b.RESPONSE_READ)


def demo_workflow() -> Workflow:
    def draft(ctx: StepContext) -> JsonValue:
        return {"slug": f"demo-{ctx.workflow_id}", "title": "Checkpoints that survive a crash"}

    def post(ctx: StepContext) -> Sequence[EffectIntent]:
        d = ctx.outputs["draft"]
        assert isinstance(d, dict)
        args = {"slug": d["slug"], "title": d["title"], "body": "Resumed, not repeated."}
        return [EffectIntent(operation="create_post", service="cms", args=args)]

    return Workflow(
        name="demo-publish",
        plan_version=VERSIONS.plan,
        states=("start", "drafted", "posted", "done"),
        initial="start",
        terminal={"done": RunStatus.COMPLETED},
        transitions=(
            Transition("start", "drafted", Step("draft", StepKind.PURE, compute=draft)),
            Transition(
                "drafted",
                "posted",
                Step("create_post", StepKind.EFFECT, intents=post, service="cms"),
            ),
            Transition(
                "posted",
                "done",
                Step("verify_post", StepKind.VERIFY, service="cms", target_step="create_post"),
            ),
        ),
    )


def cms_adapters(http: httpx.Client) -> Mapping[str, EffectAdapter]:
    """The adapters of an installed catalogue that talks to the fake CMS."""
    for scenario in installed().scenarios.values():
        adapters = scenario.make_adapters(http)
        if "cms" in adapters:
            return adapters
    raise KillpointError("the demo needs a catalogue with an adapter for the fake CMS")


class _Demo:
    """The demo's world: one store, the fake CMS, one clock, and a worker factory."""

    def __init__(self, store: Store, http: httpx.Client, clock: FakeClock) -> None:
        self.store, self.clock, self.workflow = store, clock, demo_workflow()
        self.adapters = cms_adapters(http)
        self.artifacts = FolderArtifacts(Path("killpoint-out") / "artifacts")

    def worker(self, name: str, hook: b.BoundaryHook = b.no_hook) -> Engine:
        return Engine(
            self.store,
            [self.workflow],
            self.adapters,
            artifacts=self.artifacts,
            clock=self.clock,
            versions=VERSIONS,
            settings=Settings(owner=name, lease_ttl=LEASE_TTL, secret=SecretRef(allow_weak=True)),
            hook=hook,
        )

    def killswitch(self) -> KillSwitch:
        """The product's kill-switch, scheduled to kill the first worker after the commit."""
        schedule = FaultSchedule(
            scenario=self.workflow.name, run_id="demo", crashes=(AFTER_COMMIT,)
        )
        return KillSwitch(0, schedule, self.clock, record=lambda hit: None)


@app.command()
def demo(db: DbOption = None) -> None:
    """Run a demo workflow, kill it between the CMS's commit and the receipt, and resume it."""
    from killpoint.fake_services import InProcessServices

    key = checkpoint_key(DEFAULT_KEY_ENV, allow_weak=True, use="keeps")
    store = open_store(db, must_exist=False)
    workflow_id = f"demo-{uuid4().hex[:8]}"
    say = typer.echo
    with InProcessServices() as services, services.client() as http:
        world = _Demo(store, http, FakeClock(start=time.time()))
        say(f"store     {store.url_for_humans}")
        say(f"workflow  {workflow_id}: draft → create_post (fake CMS, not idempotent) → verify")
        say("worker-1  runs it and is killed after the CMS committed the post, before the receipt")
        with contextlib.suppress(Killed):
            world.worker("worker-1", world.killswitch()).run(world.workflow.name, workflow_id, {})
        posts = services.journal.applied_effects("cms")
        say(f"          the CMS holds {len(posts)} post(s); the ledger still says 'started':")
        view = build_view(
            store,
            workflow_id,
            key=key,
            now=world.clock.now(),
            tenant=DEFAULT_TENANT,
            services=known_services(),
        )
        say("\n".join("          " + line for line in render(view)[1:]))
        world.clock.advance(LEASE_TTL + 1)
        say(f"worker-2  starts {LEASE_TTL + 1:.0f}s later (worker-1's lease has expired), resumes")
        outcome = world.worker("worker-2").resume(workflow_id)
        posts = services.journal.applied_effects("cms")
        say("\n".join(_resumed(store, workflow_id, outcome, services)))
    store.close()
    ok = outcome.status is RunStatus.COMPLETED and len(posts) == 1
    say(
        "result    "
        + (
            "OK: resumed from the checkpoint, reconciled by lookup, no duplicate post"
            if ok
            else "FAILED: the demo run did not end with exactly one post"
        )
    )
    say(
        f"inspect   killpoint inspect {workflow_id}"
        + (f" --db {db}" if db else "")
        + f"  (needs the same ${DEFAULT_KEY_ENV})"
    )
    if not ok:
        raise typer.Exit(1)


def _resumed(
    store: Store, workflow_id: str, outcome: Outcome, services: InProcessServices
) -> list[str]:
    """What the resumed run left: its outcome, the ledger's one effect, the CMS's journal."""
    [effect] = store.effects(workflow_id)
    requests = [r.operation for r in services.journal.requests("cms")]
    posts = services.journal.applied_effects("cms")
    return [
        f"          outcome: {outcome.status.value} at state {outcome.state!r}, "
        f"sequence {outcome.sequence}",
        f"          ledger: {effect.status.value}, receipt "
        f"{effect.receipt.resource_id if effect.receipt else 'none'}, same key "
        f"{effect.idempotency_key}, {effect.attempts} attempt(s) sent",
        f"          CMS journal: requests {requests}; posts created: {len(posts)}",
    ]
