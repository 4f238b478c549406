"""An irreversible notification: the case where guessing is worse than waiting, and the outbox
that lets a sender stop guessing.

Seed 001: "If an irreversible action has unknown status and cannot be queried, stop for human
review." The mailer has no lookup and a sent message cannot be unsent, so when its response is
lost the only correct end of `email` is `needs_review` with exactly one message in the
recipient's inbox, never a second send. On a clean run the provider's message id is the proof
of sending.

Seed 001 again: "If the provider lacks native support, create a local outbox with a uniqueness
constraint. For emails, store a message fingerprint and provider message ID." `email_outbox`
sends the same message through `outbound`, a provider just as unkeyed but whose sent messages
carry the sender's metadata and can be searched by it. The engine's ledger row is the outbox
entry (its idempotency key, unique in the ledger, is the fingerprint the message carries; its
receipt keeps the provider's message id), and a message in doubt is reconciled by a search:
found, its receipt is committed; provably absent, it is sent once; a search that cannot be
made is a doubt that goes to review. A lost response no longer has to end in review.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.fake_services.mailer import message_key
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import text
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.objectives import HIGH_IMPACT


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {
        "to": f"customer-{run_id}@example.test",
        "subject": f"Your order {run_id} has shipped",
        "body": "It is on its way.",
    }


def _notify(service: str) -> Callable[[StepContext], list[EffectIntent]]:
    def notify(ctx: StepContext) -> list[EffectIntent]:
        args: dict[str, JsonValue] = {
            "to": text(ctx.input, "to"),
            "subject": text(ctx.input, "subject"),
            "body": text(ctx.input, "body"),
        }
        return [EffectIntent(operation="send", service=service, args=args, high_impact=True)]

    return notify


def _expected(
    service: str, verifiable: bool
) -> Callable[[Mapping[str, JsonValue]], tuple[ExpectedEffect, ...]]:
    def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
        key = message_key(text(inp, "to"), text(inp, "subject"))
        return (ExpectedEffect(service, key, irreversible=True, verifiable=verifiable),)

    return expected_effects


def _scenario(name: str, service: str, description: str, *, searchable: bool) -> Scenario:
    workflow = Workflow(
        name=name,
        plan_version=f"{name}@1",
        states=("received", "notified", "verified"),
        initial="received",
        terminal={"verified": RunStatus.COMPLETED},
        transitions=(
            Transition(
                "received",
                "notified",
                Step("notify", StepKind.EFFECT, intents=_notify(service), service=service),
            ),
            Transition(
                "notified",
                "verified",
                Step("verify_sent", StepKind.VERIFY, service=service, target_step="notify"),
            ),
        ),
    )
    return Scenario(
        name=name,
        description=description,
        workflow=workflow,
        make_input=make_input,
        make_adapters=adapters_for,
        expected_effects=_expected(service, verifiable=searchable),
        objectives=HIGH_IMPACT,
    )


SCENARIO = _scenario(
    "email",
    "mailer",
    "one irreversible e-mail with no lookup: a lost response ends in needs_review, never a "
    "second send",
    searchable=False,
)
OUTBOX_SCENARIO = _scenario(
    "email_outbox",
    "outbound",
    "the same e-mail through a local outbox: its fingerprint travels as metadata, and a "
    "message in doubt is found by a search, or proved absent and sent once",
    searchable=True,
)
