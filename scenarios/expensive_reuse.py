"""A long expensive step whose artifact must be reused after a crash, never recomputed.

Seed 000: "Save validated extraction results, embeddings, compiled plans, generated artifacts,
or evaluation reports when recomputation would be costly." The report built here stands for that
work; a crash between the artifact upload and the next checkpoint must not make the next worker
build it again. `produce` counts its own calls (per workflow, in this process) and, when the
input names a `marker_path`, appends a line there too, so a test in another process can count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import json_bytes, number, text
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.objectives import ROUTINE

PRODUCED: Counter[str] = Counter()  # workflow id -> how often build_report ran here


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {"report_ref": f"evaluation-{run_id}", "cases": 200}


def build_report(ctx: StepContext) -> bytes:
    PRODUCED[ctx.workflow_id] += 1
    marker = ctx.input.get("marker_path")
    if isinstance(marker, str):
        with Path(marker).open("a") as out:
            out.write(f"{ctx.workflow_id}\n")
    scores: list[JsonValue] = [(n * 7919) % 100 for n in range(number(ctx.input, "cases"))]
    return json_bytes({"ref": text(ctx.input, "report_ref"), "scores": scores})


def produced(workflow_id: str, marker_path: str | Path | None = None) -> int:
    """How many times the report of `workflow_id` was built (from the marker file if given)."""
    if marker_path is None:
        return PRODUCED[workflow_id]
    path = Path(marker_path)
    lines = path.read_text().splitlines() if path.exists() else []
    return lines.count(workflow_id)


def publish(ctx: StepContext) -> list[EffectIntent]:
    report = ctx.artifact_refs["build_report"]
    args: dict[str, JsonValue] = {
        "ref": text(ctx.input, "report_ref"),
        "content": f"evaluation report sha256:{report.sha256}",
    }
    return [EffectIntent(operation="publish", service="publisher", args=args)]


def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    return (ExpectedEffect("publisher", text(inp, "report_ref")),)


WORKFLOW = Workflow(
    name="expensive_reuse",
    plan_version="expensive-reuse@1",
    states=("received", "report_built", "published", "verified"),
    initial="received",
    terminal={"verified": RunStatus.COMPLETED},
    transitions=(
        Transition(
            "received",
            "report_built",
            Step(
                "build_report",
                StepKind.EXPENSIVE,
                produce=build_report,
                media_type="application/json",
                cost=50,
            ),
        ),
        Transition(
            "report_built",
            "published",
            Step("publish", StepKind.EFFECT, intents=publish, service="publisher"),
        ),
        Transition(
            "published",
            "verified",
            Step("verify_report", StepKind.VERIFY, service="publisher", target_step="publish"),
        ),
    ),
)

SCENARIO = Scenario(
    name="expensive_reuse",
    description="an expensive report kept as an artifact and reused after a crash, then "
    "published under its hash and verified",
    workflow=WORKFLOW,
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=expected_effects,
    objectives=ROUTINE,
)
