"""The benchmark workflow: N steps, two of them effects, on the fake services.

`make_scenario(n)` builds a straight-line workflow of `n` steps: a charge on the payments
service (idempotent: it dedups by key) and a post on the CMS (not idempotent, but queryable by
slug), each followed by a verification read, and `n - 4` pure steps spread around them. Each
pure step keeps a small output (a 16-character digest of the previous one), as an agent keeps a
tool's parsed answer. `make_pure_scenario(n)` is `n` pure steps and nothing else, for the
checkpoint cost and storage measurements.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import cache

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import BudgetLimits, EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import receipt_of, text
from killpoint.scenarios.adapters import adapters_for

OUTPUT_BYTES = 16


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {
        "order_id": f"bench-order-{run_id}",
        "slug": f"bench-post-{run_id}",
        "amount_cents": 1_000,
    }


def _pure(name: str, previous: str | None, keep: bool) -> Callable[[StepContext], JsonValue]:
    def compute(ctx: StepContext) -> JsonValue:
        seed = ctx.outputs.get(previous, "") if previous else ctx.workflow_id
        if not keep:
            return None
        return hashlib.sha256(f"{name}:{seed}".encode()).hexdigest()[:OUTPUT_BYTES]

    return compute


def charge(ctx: StepContext) -> list[EffectIntent]:
    args: dict[str, JsonValue] = {
        "order_id": text(ctx.input, "order_id"),
        "amount_cents": 1_000,
        "currency": "EUR",
    }
    return [EffectIntent(operation="charge", service="payments", args=args)]


def post(ctx: StepContext) -> list[EffectIntent]:
    args: dict[str, JsonValue] = {
        "slug": text(ctx.input, "slug"),
        "title": "benchmark",
        "body": f"paid with {receipt_of(ctx, 'charge').resource_id}",
    }
    return [EffectIntent(operation="create_post", service="cms", args=args)]


def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    return (
        ExpectedEffect("payments", text(inp, "order_id"), operation="create_charge"),
        ExpectedEffect("cms", text(inp, "slug")),
    )


def _workflow(name: str, steps: list[Step]) -> Workflow:
    states = [f"s{i}" for i in range(len(steps) + 1)]
    return Workflow(
        name=name,
        plan_version=f"{name}@1",
        states=tuple(states),
        initial=states[0],
        terminal={states[-1]: RunStatus.COMPLETED},
        transitions=tuple(
            Transition(states[i], states[i + 1], step) for i, step in enumerate(steps)
        ),
    )


def _limits(n: int) -> BudgetLimits:
    return BudgetLimits(steps=4 * n + 20, time_s=10 * 24 * 3600.0)


@cache
def make_scenario(n: int = 10) -> Scenario:
    """`n` steps (n >= 5): pure steps, charge + verify, more pure steps, post + verify."""
    if n < 5:
        raise ValueError("the benchmark workflow needs at least 5 steps")
    pure = n - 4
    before = pure // 2
    steps: list[Step] = []
    previous: str | None = None
    for i in range(pure):
        if i == before:
            steps += [
                Step("charge", StepKind.EFFECT, intents=charge, service="payments"),
                Step("verify_charge", StepKind.VERIFY, service="payments", target_step="charge"),
            ]
        name = f"pure_{i}"
        steps.append(Step(name, StepKind.PURE, compute=_pure(name, previous, True)))
        previous = name
    steps += [
        Step("post", StepKind.EFFECT, intents=post, service="cms"),
        Step("verify_post", StepKind.VERIFY, service="cms", target_step="post"),
    ]
    name = f"bench{n}"
    return Scenario(
        name=name,
        description=f"{n}-step benchmark workflow: {pure} pure steps, a charge and a post, "
        "each verified",
        workflow=_workflow(name, steps),
        make_input=make_input,
        make_adapters=adapters_for,
        expected_effects=expected_effects,
        limits=_limits(n),
    )


@cache
def make_pure_scenario(n: int, keep_outputs: bool = True) -> Scenario:
    """`n` pure steps and no effect: the per-step checkpoint cost with nothing else in it."""
    steps = []
    previous: str | None = None
    for i in range(n):
        name = f"pure_{i}"
        steps.append(Step(name, StepKind.PURE, compute=_pure(name, previous, keep_outputs)))
        previous = name
    name = f"pure{n}" + ("" if keep_outputs else "_nokeep")
    return Scenario(
        name=name,
        description=f"{n} pure steps",
        workflow=_workflow(name, steps),
        make_input=make_input,
        make_adapters=adapters_for,
        expected_effects=lambda inp: (),
        limits=_limits(n),
    )
