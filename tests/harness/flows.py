"""Small workflows the engine tests run, and the kill-switch stand-in they crash them with."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from killpoint.harness.contract.adapters import EffectAdapter
from killpoint.harness.contract.artifacts import FolderArtifacts
from killpoint.harness.contract.boundaries import no_hook
from killpoint.harness.contract.clock import FakeClock
from killpoint.harness.contract.context import StepContext
from killpoint.harness.contract.records import EffectIntent, RunStatus, Versions
from killpoint.harness.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.engine.compat import CompatibilityPolicy
from killpoint.harness.engine.dispatcher import Engine
from killpoint.harness.engine.settings import Settings
from killpoint.harness.engine.store import Store

VERSIONS = Versions(
    plan="flows@1", prompt="writer@1", model_contract="draft-v1", tool_schema="tools@1"
)
DONE = {"done": RunStatus.COMPLETED}


class Died(BaseException):
    """An injected death: derives from BaseException so no engine code may catch it."""


@dataclass
class Crash:
    """A boundary hook that records every hit and dies once at (boundary, step)."""

    boundary: str | None = None
    step: str | None = None
    hits: list[tuple[str, str | None]] = field(default_factory=list)
    fired: bool = False

    def __call__(self, boundary: str, step: str | None = None) -> None:
        self.hits.append((boundary, step))
        if self.fired or boundary != self.boundary:
            return
        if self.step is not None and step != self.step:
            return
        self.fired = True
        raise Died(f"killed at {boundary} ({step})")


def _draft(ctx: StepContext) -> dict[str, str]:
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
    hook: Callable[[str, str | None], None] | None = None,
    tenant: str = "default",
    versions: Versions = VERSIONS,
    compatibility: CompatibilityPolicy | None = None,
    owner: str | None = None,
    lease_ttl: float = 30.0,
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
        ),
        hook=hook or no_hook,
    )
