"""A batch of posts in one step, where partial completion must stay visible per item.

Seed 001: "A global 'completed' flag hides partially completed batches." Here one EFFECT step
creates N CMS posts (the non-idempotent service, so a re-sent item is a visible duplicate), each
its own ledger row with its own key: a crash after item 2 of 5 leaves two committed rows and
three prepared or unstarted ones, and the resume sends only the rest. A VERIFY step then reads
every post back.

Each intent's operation carries the item's index (`create_post#2`): the reference engine names a
ledger row by step and operation, so without it every item of the batch would share one row.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import number, text
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.objectives import ROUTINE

BATCH_SIZE = 5


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {"batch_id": f"batch-{run_id}", "size": BATCH_SIZE}


def slugs(inp: Mapping[str, JsonValue]) -> list[str]:
    batch = text(inp, "batch_id")
    return [f"{batch}-item-{n}" for n in range(1, number(inp, "size") + 1)]


def post_items(ctx: StepContext) -> list[EffectIntent]:
    return [
        EffectIntent(
            operation=f"create_post#{n}",
            service="cms",
            args={"slug": slug, "title": f"Item {n}", "body": f"Batch item {n} of {slug}."},
        )
        for n, slug in enumerate(slugs(ctx.input), start=1)
    ]


def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    return tuple(ExpectedEffect("cms", slug) for slug in slugs(inp))


WORKFLOW = Workflow(
    name="batch",
    plan_version="batch@1",
    states=("received", "posted", "verified"),
    initial="received",
    terminal={"verified": RunStatus.COMPLETED},
    transitions=(
        Transition(
            "received",
            "posted",
            Step("post_items", StepKind.EFFECT, intents=post_items, service="cms"),
        ),
        Transition(
            "posted",
            "verified",
            Step("verify_items", StepKind.VERIFY, service="cms", target_step="post_items"),
        ),
    ),
)

SCENARIO = Scenario(
    name="batch",
    description=f"{BATCH_SIZE} CMS posts from one step, one ledger row each, then every post "
    "read back",
    workflow=WORKFLOW,
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=expected_effects,
    objectives=ROUTINE,
)
