"""An irreversible, unqueryable notification: the case where guessing is worse than waiting.

Seed 001: "If an irreversible action has unknown status and cannot be queried, stop for human
review." The mailer has no lookup and a sent message cannot be unsent, so when its response is
lost the only correct end is `needs_review` with exactly one message in the recipient's inbox,
never a second send. On a clean run the provider's message id is the proof of sending.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.fake_services.mailer import message_key
from killpoint.harness.contract.context import StepContext
from killpoint.harness.contract.records import EffectIntent, RunStatus
from killpoint.harness.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import text
from killpoint.scenarios.adapters import adapters_for


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {
        "to": f"customer-{run_id}@example.test",
        "subject": f"Your order {run_id} has shipped",
        "body": "It is on its way.",
    }


def notify(ctx: StepContext) -> list[EffectIntent]:
    args: dict[str, JsonValue] = {
        "to": text(ctx.input, "to"),
        "subject": text(ctx.input, "subject"),
        "body": text(ctx.input, "body"),
    }
    return [EffectIntent(operation="send", service="mailer", args=args, high_impact=True)]


def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    key = message_key(text(inp, "to"), text(inp, "subject"))
    return (ExpectedEffect("mailer", key, irreversible=True, verifiable=False),)


WORKFLOW = Workflow(
    name="email",
    plan_version="email@1",
    states=("received", "notified", "verified"),
    initial="received",
    terminal={"verified": RunStatus.COMPLETED},
    transitions=(
        Transition(
            "received",
            "notified",
            Step("notify", StepKind.EFFECT, intents=notify, service="mailer"),
        ),
        Transition(
            "notified",
            "verified",
            Step("verify_sent", StepKind.VERIFY, service="mailer", target_step="notify"),
        ),
    ),
)

SCENARIO = Scenario(
    name="email",
    description="one irreversible e-mail with no lookup: a lost response ends in needs_review, "
    "never a second send",
    workflow=WORKFLOW,
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=expected_effects,
)
