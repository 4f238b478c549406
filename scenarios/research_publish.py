"""Seed 000's research-and-publish agent, the guide's running example.

It is the workflow the seed walks through state by state (brief_validated, research_complete,
draft_validated, assets_uploaded, publish_intent_recorded, published) and the one whose story
motivates the whole harness: the process dies after the CMS created the post and before the
response came back, and a blind retry makes a duplicate post. So it exercises every step kind
that matters there: a validated brief, research kept as an artifact, a model draft validated
*before* it is checkpointed, an idempotent image upload, a non-idempotent CMS create keyed by
slug, and a verification read before `completed`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import json_bytes, load_json, receipt_of, record, sha256, text
from killpoint.scenarios.adapters import adapters_for, artifact_args
from killpoint.scenarios.objectives import LOW_RISK

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{2,80}$")
MIN_WORDS = 20
MAX_TITLE = 120


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {
        "topic": "Checkpointing long-running agents",
        "slug": f"checkpointing-agents-{run_id}".lower(),
        "audience": "platform engineers",
    }


def validate_brief(ctx: StepContext) -> JsonValue:
    return {
        "topic": text(ctx.input, "topic").strip(),
        "slug": text(ctx.input, "slug"),
        "audience": text(ctx.input, "audience").strip(),
    }


def check_brief(value: JsonValue) -> str | None:
    if not isinstance(value, dict) or not value.get("topic"):
        return "the brief has no topic"
    if not SLUG.match(str(value.get("slug", ""))):
        return f"slug {value.get('slug')!r} is not a valid slug"
    return None


def research(ctx: StepContext) -> bytes:
    """The expensive part: gather sources. Deterministic here, so a rerun is detectable."""
    brief = record(ctx.outputs, "validate_brief")
    topic = text(brief, "topic")
    sources: list[JsonValue] = [
        {"id": f"src-{n}", "title": f"{topic}: source {n}", "url": f"https://example.test/{n}"}
        for n in range(1, 4)
    ]
    return json_bytes({"topic": topic, "sources": sources})


def draft(ctx: StepContext) -> JsonValue:
    """Stand-in for the model call: a structured draft built from the research notes."""
    brief = record(ctx.outputs, "validate_brief")
    notes = load_json(ctx.artifact("research"))
    sources = notes["sources"]
    assert isinstance(sources, list)
    cited = [s["id"] for s in sources if isinstance(s, dict)]
    findings = ctx.input.get("findings", 3)  # a thin draft (one finding) fails its validator
    assert isinstance(findings, int)
    body = " ".join(
        f"Finding {n}: a checkpoint records what was decided and verified, not the transcript."
        for n in range(1, findings + 1)
    )
    return {
        "title": f"{text(brief, 'topic')} for {text(brief, 'audience')}",
        "slug": text(brief, "slug"),
        "body": body,
        "cites": cited[:2],
        "known_sources": cited,
    }


def check_draft(value: JsonValue) -> str | None:
    """Schema and business rules for the model output, before it may become state."""
    if not isinstance(value, dict):
        return "the draft is not an object"
    title, body, cites = value.get("title"), value.get("body"), value.get("cites")
    known = value.get("known_sources")
    if not isinstance(title, str) or not 0 < len(title) <= MAX_TITLE:
        return "title missing or too long"
    if not isinstance(body, str) or len(body.split()) < MIN_WORDS:
        return f"body has fewer than {MIN_WORDS} words"
    if not isinstance(cites, list) or not cites:
        return "the draft cites no source"
    if not isinstance(known, list) or any(c not in known for c in cites):
        return "the draft cites a source the research did not find"
    return None


def image_bytes(inp: Mapping[str, JsonValue]) -> bytes:
    """The post's header image: a tiny SVG, unique per run so runs never share an upload."""
    slug = text(inp, "slug")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">'
        f'<text x="4" y="24">{slug}</text></svg>'
    ).encode()


def upload_image(ctx: StepContext) -> list[EffectIntent]:
    args = artifact_args(image_bytes(ctx.input), "image/svg+xml")
    return [EffectIntent(operation="put", service="artifacts", args=args)]


def record_publish_intent(ctx: StepContext) -> JsonValue:
    """Name the post exactly as it will be created, with the image that was really uploaded."""
    written = record(ctx.outputs, "draft")
    return {
        "slug": text(written, "slug"),
        "title": text(written, "title"),
        "image_sha256": receipt_of(ctx, "upload_image").resource_id,
    }


def publish(ctx: StepContext) -> list[EffectIntent]:
    intent = record(ctx.outputs, "record_publish_intent")
    written = record(ctx.outputs, "draft")
    args: dict[str, JsonValue] = {
        "slug": text(intent, "slug"),
        "title": text(intent, "title"),
        "body": text(written, "body"),
        "image_sha256": text(intent, "image_sha256"),
    }
    return [EffectIntent(operation="create_post", service="cms", args=args, high_impact=True)]


def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    return (
        ExpectedEffect("artifacts", sha256(image_bytes(inp)), verifiable=False),
        ExpectedEffect("cms", text(inp, "slug")),
    )


STATES = (
    "received",
    "brief_validated",
    "research_complete",
    "draft_validated",
    "assets_uploaded",
    "publish_intent_recorded",
    "published",
    "verified",
)

WORKFLOW = Workflow(
    name="research_publish",
    plan_version="publish-flow@5",
    states=STATES,
    initial="received",
    terminal={"verified": RunStatus.COMPLETED},
    transitions=(
        Transition(
            "received",
            "brief_validated",
            Step("validate_brief", StepKind.PURE, compute=validate_brief, validate=check_brief),
        ),
        Transition(
            "brief_validated",
            "research_complete",
            Step(
                "research",
                StepKind.EXPENSIVE,
                produce=research,
                media_type="application/json",
                cost=10,
            ),
        ),
        Transition(
            "research_complete",
            "draft_validated",
            Step("draft", StepKind.PURE, compute=draft, validate=check_draft, cost=5),
        ),
        Transition(
            "draft_validated",
            "assets_uploaded",
            Step("upload_image", StepKind.EFFECT, intents=upload_image, service="artifacts"),
        ),
        Transition(
            "assets_uploaded",
            "publish_intent_recorded",
            Step("record_publish_intent", StepKind.PURE, compute=record_publish_intent),
        ),
        Transition(
            "publish_intent_recorded",
            "published",
            Step("publish", StepKind.EFFECT, intents=publish, service="cms"),
        ),
        Transition(
            "published",
            "verified",
            Step("verify_post", StepKind.VERIFY, service="cms", target_step="publish"),
        ),
    ),
)

SCENARIO = Scenario(
    name="research_publish",
    description="seed 000's research-and-publish agent: research artifact, validated draft, "
    "image upload, CMS post keyed by slug, verified",
    workflow=WORKFLOW,
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=expected_effects,
    objectives=LOW_RISK,
)


def make_thin_input(run_id: str) -> dict[str, JsonValue]:
    return {**make_input(run_id), "slug": f"thin-draft-{run_id}".lower(), "findings": 1}


THIN_DRAFT_SCENARIO = Scenario(
    name="research_publish_thin_draft",
    description="the model's draft is too thin to pass its validator: the run stops for review "
    "before anything is uploaded or published",
    workflow=WORKFLOW,
    make_input=make_thin_input,
    make_adapters=adapters_for,
    expected_effects=lambda inp: (),  # an invalid draft must cause nothing in the world
    expected_status=RunStatus.NEEDS_REVIEW,
    objectives=LOW_RISK,
)
