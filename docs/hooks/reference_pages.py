"""The site's generated reference: one page per installed catalogue scenario, the services its
adapters talk to, and the report's metrics — written from the objects themselves at build time,
so a page can never describe a scenario, a service or a figure other than the one that runs.

`pages()` is the whole output (path → markdown); the mkdocs hooks below only hand it to the
site, and `tests/docs/test_reference_pages.py` reads it directly.
"""

from __future__ import annotations

import ast
import importlib
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.context import StepContext
from killpoint.contract.records import ArtifactRef
from killpoint.contract.workflow import StepKind, Transition
from killpoint.harness.catalogue import installed
from killpoint.harness.scenario import Scenario
from killpoint.reports.definitions import METRICS

SCENARIOS = "reference/scenarios"
SERVICES = "reference/services.md"
METRICS_PAGE = "reference/metrics.md"
EXAMPLE_RUN = "example"  # the run id the pages' example input is made for
FLAGS = ("idempotent", "queryable", "irreversible")


def pages() -> dict[str, str]:
    """Every generated page, by its path under docs/."""
    catalogue = installed()
    found = {f"{SCENARIOS}.md": scenario_index(catalogue.scenarios)}
    for name, scenario in catalogue.scenarios.items():
        found[f"{SCENARIOS}/{name}.md"] = scenario_page(scenario)
    found[SERVICES] = services_page(catalogue.services)
    found[METRICS_PAGE] = metrics_page()
    return found


def scenario_index(scenarios: Mapping[str, Scenario]) -> str:
    rows = [
        f"| [`{name}`](scenarios/{name}.md) | {s.description} | "
        f"{', '.join(f'`{x}`' for x in sorted(s.workflow.services)) or '—'} | {len(s.cases)} |"
        for name, s in scenarios.items()
    ]
    return "\n".join(
        [
            "# Catalogue scenarios",
            "",
            "Every scenario the installed catalogues register (`killpoint run -s NAME`), generated "
            "from the scenario objects when the site is built. Each page gives the workflow's "
            "states and steps, the input one run is made with, the services its effect steps "
            "call, what each effect step needs of the step context, the effects the oracle "
            "expects exactly once, the outcome, the named cases and the recovery objectives.",
            "",
            "| scenario | what it does | services | named cases |",
            "| --- | --- | --- | --- |",
            *rows,
            "",
        ]
    )


def scenario_page(s: Scenario) -> str:
    wf = s.workflow
    example = dict(s.make_input(EXAMPLE_RUN))
    lines = [
        f"# `{s.name}`",
        "",
        f"{s.description[:1].upper()}{s.description[1:]}.",
        "",
        f"Workflow `{wf.name}`, plan version `{wf.plan_version}`. Run it with "
        f"`killpoint run -s {s.name}`; an engine of your own runs it with "
        f"`killpoint run -s {s.name} --engine module:factory`.",
        "",
        "## States",
        "",
        f"Initial: `{wf.initial}`. Terminal: "
        + ", ".join(f"`{state}` ({status.value})" for state, status in wf.terminal.items())
        + f". All: {', '.join(f'`{x}`' for x in wf.states)}.",
        "",
        "## Steps",
        "",
        "One legal transition out of each non-terminal state; `on failure` is where a definite "
        "rejection (`EffectRejected`) of its effect leads.",
        "",
        "| from | step | kind | service | to | on failure |",
        "| --- | --- | --- | --- | --- | --- |",
        *(step_row(t) for t in wf.transitions),
        "",
        *input_section(s, example),
        *effects_section(s, example),
    ]
    return "\n".join(lines)


def input_section(s: Scenario, example: dict[str, JsonValue]) -> list[str]:
    return [
        "## Input",
        "",
        f"`make_input(run_id)` makes one run's input; business keys carry the run id, because the "
        f"runs of a campaign share one store and one set of services. For run id "
        f"`{EXAMPLE_RUN}`:",
        "",
        "| key | value |",
        "| --- | --- |",
        *(f"| `{k}` | `{v!r}` |" for k, v in example.items()),
        "",
        "## What each step sends and needs",
        "",
        "Each effect or compensation step turns the step context into intents for its service "
        "(the adapter's `send`). Probed here with the example input, the outputs and artifacts "
        "of the steps before it, and no effects in the context: a step that reads an earlier "
        "effect's receipt says so (an engine must hand it that effect, committed, among "
        "`StepContext.effects`), and so does a step that needs an earlier step's output.",
        "",
        "| step | operation → service | arguments, or what it needs |",
        "| --- | --- | --- |",
        *probe_rows(s, example),
        "",
    ]


def effects_section(s: Scenario, example: dict[str, JsonValue]) -> list[str]:
    return [
        "## Expected effects and outcome",
        "",
        f"A run must end `{s.expected_status.value}` and cause each of these once, as the "
        "services' own journals record it (an effect keyed by a resource an earlier one "
        "created, a refund by its charge, shows a readable label):",
        "",
        "| service | operation | business key | irreversible | verifiable | gate |",
        "| --- | --- | --- | --- | --- | --- |",
        *(
            f"| [`{e.service}`](../services.md#{e.service}) | {op(e.operation)} | "
            f"`{e.business_key}` | {yes(e.irreversible)} | {yes(e.verifiable)} | {e.gate or '—'} |"
            for e in s.expected_effects(example)
        ),
        "",
        f"Budget: {s.limits.attempts} attempts, {s.limits.steps} steps, cost {s.limits.cost}, "
        f"{s.limits.time_s:g} s.",
        *gates(s),
        "",
        "## Named cases",
        "",
        *named_cases(s),
        "",
        "## Recovery objectives",
        "",
        (
            "None declared: the objectives are reported `not_declared`."
            if s.objectives is None
            else f"`{s.objectives!r}`"
        ),
        "",
    ]


def step_row(t: Transition) -> str:
    step = t.step
    service = f"[`{step.service}`](../services.md#{step.service})" if step.service else "—"
    detail = {StepKind.APPROVAL: step.gate, StepKind.VERIFY: step.target_step}.get(step.kind)
    kind = f"{step.kind.value} ({detail})" if detail else step.kind.value
    return (
        f"| `{t.source}` | `{step.name}` | {kind} | {service} | `{t.target}` | "
        f"{f'`{t.on_failure}`' if t.on_failure else '—'} |"
    )


def probe_rows(s: Scenario, example: dict[str, JsonValue]) -> list[str]:
    """Each effect step's intents, from a context an engine would build in a fault-free run
    (outputs and artifacts of the steps before it) but with no effects committed yet."""
    outputs: dict[str, JsonValue] = {}
    refs: dict[str, ArtifactRef] = {}
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        store = FolderArtifacts(Path(folder))
        for t in s.workflow.transitions:
            step = t.step
            ctx = StepContext(
                workflow_id=f"wf-{EXAMPLE_RUN}",
                step=step.name,
                input=example,
                outputs=outputs,
                artifact_refs=refs,
                effects=(),
                store=store,
                hook=no_boundary,
                now=0.0,
            )
            try:
                if step.kind is StepKind.PURE and step.compute is not None:
                    outputs[step.name] = step.compute(ctx)
                elif step.kind is StepKind.EXPENSIVE and step.produce is not None:
                    sha, uri = store.put(step.produce(ctx))
                    refs[step.name] = ArtifactRef(
                        uri=uri, sha256=sha, media_type=step.media_type, produced_by=step.name
                    )
                elif step.intents is not None:
                    for intent in step.intents(ctx):
                        args = ", ".join(f"`{k}`" for k in intent.args)
                        sent = f"`{intent.operation}` → `{intent.service}`"
                        rows.append(f"| `{step.name}` | {sent} | {args} |")
            except Exception as needs:  # what the step says it lacks is the point
                said = str(needs).splitlines()[0] if str(needs) else type(needs).__name__
                where = f"→ `{step.service}`" if step.service else f"({step.kind.value} step)"
                rows.append(f"| `{step.name}` | {where} | needs: {said} |")
    return rows or ["| — | — | no effect steps |"]


def no_boundary(boundary: str, step: str | None = None) -> None:
    """The probe's boundary hook: nothing dies while a page is written."""


def gates(s: Scenario) -> list[str]:
    return [
        f"Gate `{name}`: approved by `{p.actor}` for {p.ttl_s:g} s"
        + (f", covering {dict(p.covers)}" if p.covers else "")
        + "."
        for name, p in s.gates.items()
    ]


def named_cases(s: Scenario) -> list[str]:
    if not s.cases:
        return ["None: the generated schedules only."]
    return [
        "Rows of the seeds' fault tables, each a schedule and the recovery the seed expects of "
        "it, judged as the verdict `expected_recovery`.",
        "",
        "| case | seed | expected recovery |",
        "| --- | --- | --- |",
        *(f"| `{c.name}` | {c.seed} | {c.expected} |" for c in s.cases),
    ]


def services_page(services: Mapping[str, Any]) -> str:
    lines = [
        "# Services",
        "",
        "The fake downstream services the catalogue's effect steps call, each with the real API "
        "it imitates, its recovery flags (`idempotent`: a retry with the same key cannot apply "
        "the effect twice; `queryable`: `lookup` can prove presence or absence; `irreversible`: "
        "no compensation exists, so an unknown outcome must be escalated) and the scenario "
        "adapter an engine calls (`send`, `lookup`, `verify`).",
        "",
    ]
    adapters = adapter_classes()
    for name, flags in services.items():
        lines += [
            f"## {name}",
            "",
            " · ".join(f"{flag}: **{yes(getattr(flags, flag))}**" for flag in FLAGS),
            "",
            module_doc(f"killpoint.fake_services.{name}"),
            "",
        ]
        if name in adapters:
            lines += [
                f"::: {adapters[name]}",
                "    options:",
                "      heading_level: 3",
                "      show_root_heading: true",
                "      show_source: false",
                "",
            ]
    return "\n".join(lines)


def adapter_classes() -> dict[str, str]:
    """The scenario adapter of each service, by its dotted path (for mkdocstrings)."""
    import httpx

    from killpoint.scenarios.adapters import adapters_for

    with httpx.Client() as http:
        made = adapters_for(http)
    return {name: f"{type(a).__module__}.{type(a).__qualname__}" for name, a in made.items()}


def module_doc(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    return ast.get_docstring(ast.parse(Path(spec.origin).read_text(encoding="utf-8"))) or ""


def metrics_page() -> str:
    lines = [
        "# The report's metrics",
        "",
        "Every figure of the HTML report and the console summary, defined. Generated from "
        "`killpoint.reports.definitions.METRICS`, the same definitions the report prints beside "
        "its figures.",
        "",
    ]
    for d in METRICS:
        lines += [f"## {d.title}", "", f"`{d.key}` — {d.meaning}", ""]
    return "\n".join(lines)


def op(operation: str | None) -> str:
    return f"`{operation}`" if operation else "its only one"


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


# mkdocs hooks: the pages join the site's files, the scenario pages its nav.


def on_config(config: Any) -> Any:
    scenario_pages = [{name: f"{SCENARIOS}/{name}.md"} for name in installed().scenarios]
    config["nav"] = [with_scenarios(item, scenario_pages) for item in config["nav"] or []]
    return config


def with_scenarios(item: Any, scenario_pages: list[dict[str, str]]) -> Any:
    """The nav item, with the scenario index expanded into a section of every scenario."""
    if isinstance(item, dict):
        return {k: with_scenarios(v, scenario_pages) for k, v in item.items()}
    if isinstance(item, list):
        return [with_scenarios(v, scenario_pages) for v in item]
    if item == f"{SCENARIOS}.md":
        return [item, *scenario_pages]
    return item


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files
