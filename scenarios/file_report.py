"""A report published as a file, and the draft it supersedes deleted: file and delete effects.

Seed 001: "For file writes, use content hashes and atomic rename. For deletes, verify the
resource state before and after." The run writes its draft to an object store (`files`, S3's
rules), publishes the report at its final name, reads it back by its hash, then deletes the
draft, naming the version it wrote (`If-Match`: the state checked before, in the same
request), and reads the name again (the state after: gone).

Each write is one checksummed PUT, which S3 shows whole or not at all: a crash can never leave
a torn report at its name. A draft that someone else saved again meanwhile is not this run's
to delete: its conditional delete is refused, and the run stops for review
(`draft_changed`) with the other writer's version intact.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import text
from killpoint.scenarios.adapters import adapters_for, file_args
from killpoint.scenarios.objectives import HIGH_IMPACT


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {
        "title": f"Quarterly report {run_id}",
        "draft_key": f"drafts/{run_id}/report.md",
        "report_key": f"reports/{run_id}/report.md",
    }


def draft(inp: Mapping[str, JsonValue]) -> bytes:
    return f"# {text(inp, 'title')}\n\nDRAFT: figures to be checked.\n".encode()


def report(inp: Mapping[str, JsonValue]) -> bytes:
    lines = [f"# {text(inp, 'title')}", ""] + [f"- figure {n}: checked" for n in range(1, 41)]
    return "\n".join(lines).encode()


def write_draft(ctx: StepContext) -> list[EffectIntent]:
    args = file_args(text(ctx.input, "draft_key"), draft(ctx.input))
    return [EffectIntent(operation="put", service="files", args=args)]


def publish(ctx: StepContext) -> list[EffectIntent]:
    args = file_args(text(ctx.input, "report_key"), report(ctx.input))
    return [EffectIntent(operation="put", service="files", args=args, high_impact=True)]


def delete_draft(ctx: StepContext) -> list[EffectIntent]:
    args: dict[str, JsonValue] = {
        "key": text(ctx.input, "draft_key"),
        "if_match": hashlib.sha256(draft(ctx.input)).hexdigest(),  # the version this run wrote
    }
    return [EffectIntent(operation="delete", service="files", args=args, high_impact=True)]


def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    draft_key, report_key = text(inp, "draft_key"), text(inp, "report_key")
    return (
        # the draft is working state, proven by its receipt; the flow verifies the report
        # and the deletion
        ExpectedEffect("files", draft_key, operation="put", verifiable=False),
        ExpectedEffect("files", report_key, operation="put"),
        ExpectedEffect("files", draft_key, operation="delete", irreversible=True),
    )


WORKFLOW = Workflow(
    name="file_report",
    plan_version="file-report@1",
    states=(
        "received",
        "drafted",
        "published",
        "report_checked",
        "draft_deleted",
        "done",
        "draft_changed",
    ),
    initial="received",
    terminal={"done": RunStatus.COMPLETED, "draft_changed": RunStatus.NEEDS_REVIEW},
    transitions=(
        Transition(
            "received",
            "drafted",
            Step("write_draft", StepKind.EFFECT, intents=write_draft, service="files"),
        ),
        Transition(
            "drafted",
            "published",
            Step("publish", StepKind.EFFECT, intents=publish, service="files"),
        ),
        Transition(
            "published",
            "report_checked",
            Step("check_report", StepKind.VERIFY, service="files", target_step="publish"),
        ),
        Transition(
            "report_checked",
            "draft_deleted",
            Step("delete_draft", StepKind.EFFECT, intents=delete_draft, service="files"),
            on_failure="draft_changed",
        ),
        Transition(
            "draft_deleted",
            "done",
            Step("check_deleted", StepKind.VERIFY, service="files", target_step="delete_draft"),
        ),
    ),
)

SCENARIO = Scenario(
    name="file_report",
    description="a report file written whole by its hash, then the draft it supersedes "
    "deleted only in the version the run wrote, checked before and after",
    workflow=WORKFLOW,
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=expected_effects,
    objectives=HIGH_IMPACT,
)
