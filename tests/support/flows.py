"""Small workflows the engine tests run, and the product's kill-switch set to crash them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import JsonValue
from sqlalchemy import column, delete, insert, table, update

from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.boundaries import BoundaryHook, no_hook
from killpoint.contract.clock import Clock, FakeClock
from killpoint.contract.context import StepContext
from killpoint.contract.records import DeployNotice, EffectIntent, RunStatus, Versions
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.run.killswitch import Hit, KillSwitch
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.reference.compat import CompatibilityPolicy
from killpoint.reference.dispatcher import Engine
from killpoint.reference.settings import Settings
from killpoint.reference.store import Store

VERSIONS = Versions(
    plan="flows@1", prompt="writer@1", model_contract="draft-v1", tool_schema="tools@1"
)
DONE = {"done": RunStatus.COMPLETED}


def kill_at(clock: Clock, boundary: str, step: str | None = None) -> KillSwitch:
    """The product's kill-switch for one worker, scheduled to kill it (`Killed`) at its first
    hit of (step, boundary); `step=None` for a boundary outside any step."""
    crash = HitPoint(worker=0, step=step, boundary=boundary)
    schedule = FaultSchedule(scenario="flows", run_id=crash.label(), crashes=(crash,))
    return KillSwitch(0, schedule, clock, record=lambda hit: None)


def recording(clock: Clock) -> tuple[KillSwitch, list[Hit]]:
    """A kill-switch that kills no one, and the list of every hit it records."""
    hits: list[Hit] = []
    schedule = FaultSchedule(scenario="flows", run_id="record")
    return KillSwitch(0, schedule, clock, record=hits.append), hits


def alter_rows(store: Store, name: str, values: Mapping[str, Any], **where: Any) -> int:
    """Change stored rows behind the engine's back, as an attacker or a bad disk would: plain
    SQL on the table by its name, not through the engine's own table definitions."""
    t = table(name, *(column(c) for c in {*values, *where}), schema=store.schema)
    statement = update(t).values(dict(values))
    for key, value in where.items():
        statement = statement.where(t.c[key] == value)
    with store.engine.begin() as conn:
        return conn.execute(statement).rowcount


def delete_rows(store: Store, name: str, **where: Any) -> int:
    """Remove stored rows behind the engine's back (a careless clean-up, an attacker)."""
    t = table(name, *(column(c) for c in where), schema=store.schema)
    statement = delete(t)
    for key, value in where.items():
        statement = statement.where(t.c[key] == value)
    with store.engine.begin() as conn:
        return conn.execute(statement).rowcount


def insert_row(store: Store, name: str, row: Mapping[str, Any]) -> None:
    """Add a row the engine never wrote (a forged one)."""
    t = table(name, *(column(c) for c in row), schema=store.schema)
    with store.engine.begin() as conn:
        conn.execute(insert(t).values(dict(row)))


def _draft(ctx: StepContext) -> JsonValue:
    return {"slug": str(ctx.input["slug"]), "title": str(ctx.input["title"])}


def _post_intents(ctx: StepContext) -> Sequence[EffectIntent]:
    draft = ctx.outputs["draft"]
    assert isinstance(draft, dict)
    return [
        EffectIntent(
            operation="create_post",
            service="cms",
            args={"slug": draft["slug"], "title": draft["title"], "body": "hello"},
        )
    ]


def _charge_intents(ctx: StepContext) -> Sequence[EffectIntent]:
    return [
        EffectIntent(
            operation="charge",
            service="payments",
            args={
                "order_id": str(ctx.input["order_id"]),
                "amount_cents": 1250,
                "currency": "EUR",
            },
            high_impact=True,
        )
    ]


def pure_flow() -> Workflow:
    return Workflow(
        name="pure",
        plan_version="flows@1",
        states=("start", "planned", "done"),
        initial="start",
        terminal=DONE,
        transitions=(
            Transition("start", "planned", Step("plan", StepKind.PURE, compute=lambda c: 1)),
            Transition("planned", "done", Step("finish", StepKind.PURE, compute=lambda c: 2)),
        ),
    )


def publish_flow() -> Workflow:
    """pure → effect on the non-idempotent cms → verify: the demo's shape."""
    return Workflow(
        name="publish",
        plan_version="flows@1",
        states=("start", "drafted", "posted", "done"),
        initial="start",
        terminal=DONE,
        transitions=(
            Transition("start", "drafted", Step("draft", StepKind.PURE, compute=_draft)),
            Transition(
                "drafted",
                "posted",
                Step("create_post", StepKind.EFFECT, intents=_post_intents, service="cms"),
            ),
            Transition(
                "posted",
                "done",
                Step("verify_post", StepKind.VERIFY, service="cms", target_step="create_post"),
            ),
        ),
    )


def pay_flow() -> Workflow:
    """approval gate → high-impact charge on the idempotent payments service → verify."""
    return Workflow(
        name="pay",
        plan_version="flows@1",
        states=("start", "approved", "charged", "done"),
        initial="start",
        terminal=DONE,
        transitions=(
            Transition("start", "approved", Step("approve", StepKind.APPROVAL, gate="pay")),
            Transition(
                "approved",
                "charged",
                Step(
                    "charge",
                    StepKind.EFFECT,
                    intents=_charge_intents,
                    service="payments",
                    gate="pay",
                ),
            ),
            Transition(
                "charged",
                "done",
                Step("verify_charge", StepKind.VERIFY, service="payments", target_step="charge"),
            ),
        ),
    )


def _mail_intents(ctx: StepContext) -> Sequence[EffectIntent]:
    return [
        EffectIntent(
            operation="send",
            service="mailer",
            args={"to": str(ctx.input["to"]), "subject": "done", "body": "your run finished"},
            high_impact=True,
        )
    ]


def notify_flow() -> Workflow:
    """One irreversible e-mail that the mailer cannot be asked about."""
    return Workflow(
        name="notify",
        plan_version="flows@1",
        states=("start", "sent", "done"),
        initial="start",
        terminal=DONE,
        transitions=(
            Transition(
                "start",
                "sent",
                Step("mail", StepKind.EFFECT, intents=_mail_intents, service="mailer"),
            ),
            Transition(
                "sent",
                "done",
                Step("verify_mail", StepKind.VERIFY, service="mailer", target_step="mail"),
            ),
        ),
    )


def artifact_flow() -> Workflow:
    """expensive (kept as an artifact) → pure step that reads the artifact back."""

    def use(ctx: StepContext) -> int:
        return len(ctx.artifact("render"))

    return Workflow(
        name="artifact",
        plan_version="flows@1",
        states=("start", "rendered", "used", "done"),
        initial="start",
        terminal=DONE,
        transitions=(
            Transition(
                "start",
                "rendered",
                Step(
                    "render",
                    StepKind.EXPENSIVE,
                    produce=lambda c: b"rendered " + str(c.input["slug"]).encode(),
                    media_type="text/plain",
                ),
            ),
            Transition("rendered", "used", Step("use", StepKind.PURE, compute=use)),
            Transition("used", "done", Step("finish", StepKind.PURE, compute=lambda c: None)),
        ),
    )


ALL_FLOWS: tuple[Callable[[], Workflow], ...] = (
    pure_flow,
    publish_flow,
    pay_flow,
    notify_flow,
    artifact_flow,
)


def make_engine(
    store: Store,
    clock: FakeClock,
    root: Path,
    adapters: Mapping[str, EffectAdapter] | None = None,
    *,
    hook: BoundaryHook | None = None,
    tenant: str = "default",
    versions: Versions = VERSIONS,
    compatibility: CompatibilityPolicy | None = None,
    owner: str | None = None,
    lease_ttl: float = 30.0,
    deploy: DeployNotice | None = None,
    max_deliveries: int | None = 20,
) -> Engine:
    """A fresh worker: a new Engine, as a restarted process would build it."""
    flows = [f() for f in ALL_FLOWS]
    needed = set().union(*(w.services for w in flows))
    given = dict(adapters or {})
    usable = [w for w in flows if w.services <= set(given)] if not needed <= set(given) else flows
    return Engine(
        store,
        usable,
        given,
        artifacts=FolderArtifacts(root / "artifacts"),
        clock=clock,
        versions=versions,
        settings=Settings(
            tenant=tenant,
            owner=owner,
            lease_ttl=lease_ttl,
            compatibility=compatibility or CompatibilityPolicy(),
            deploy=deploy,
            max_deliveries=max_deliveries,
        ),
        hook=hook or no_hook,
    )
