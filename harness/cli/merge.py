"""`killpoint merge`: shard results (`run --shard i/N --out …`) combined into one campaign."""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path
from typing import Annotated

import typer

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign import preflight
from killpoint.harness.cli._app import app
from killpoint.harness.cli._markdown import summary_markdown
from killpoint.harness.cli._shared import JsonOption
from killpoint.harness.cli._summary import print_summary, write_outputs
from killpoint.harness.cli._trend import TrendOption, check_trend
from killpoint.harness.results import CampaignResult, load_result

PathOption = Annotated[Path | None, typer.Option(metavar="PATH", show_default=False)]
SHARD = re.compile(r"(\d+)/(\d+)")


@app.command()
def merge(
    results: Annotated[
        list[Path],
        typer.Argument(metavar="RESULT...", help="Shard results written by `run --out`."),
    ],
    report: Annotated[
        Path | None,
        typer.Option(metavar="PATH", show_default=False, help="Write the merged HTML report."),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(metavar="PATH", show_default=False, help="Write merged JUnit XML."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(metavar="PATH", show_default=False, help="Write the merged result JSON."),
    ] = None,
    trend: TrendOption = None,
    summary_md: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            show_default=False,
            help="Write the summary in Markdown (a CI job's summary page).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Combine shard results into one campaign result and report."""
    from killpoint.harness.campaign.merge import merge_results

    preflight.outputs(
        {"--report": report, "--junit": junit, "--out": out, "--summary-md": summary_md}
    )
    check_trend(trend)
    parts = [load_result(path) for path in results]
    missing = _missing_shards(parts)
    if missing:
        raise KillpointError(f"not every shard is here: {missing}; merge every shard's result")
    merged = merge_results(parts)
    written, unwritten = write_outputs(merged, report, junit, out, trend=trend)
    if summary_md is not None:
        summary_line, summary_failed = _write_summary(merged, summary_md)
        written += summary_line
        unwritten = "; ".join(x for x in (unwritten, summary_failed) if x)
    print_summary(merged, as_json, written)
    if unwritten:
        raise KillpointError(unwritten)
    if merged.violations:
        raise typer.Exit(1)


def _write_summary(merged: CampaignResult, path: Path) -> tuple[list[str], str]:
    """The Markdown summary written: ([its line for the console], "") or ([], why not)."""
    from killpoint.reports import write_atomic

    try:
        return [f"summary: {write_atomic(path, summary_markdown(merged))}"], ""
    except OSError as exc:
        return [], f"could not write summary {path}: {exc.strerror or exc}"


def _missing_shards(parts: list[CampaignResult]) -> str:
    """The shards of a sharded campaign that no part is ("" when none is missing): merged
    without them, a campaign with a shard lost (an artifact missing in CI) would pass as whole."""
    seen: dict[int, set[int]] = {}
    for part in parts:
        found = SHARD.fullmatch(part.shard or "")
        if found:
            seen.setdefault(int(found[2]), set()).add(int(found[1]))
    missing = []
    for total, indices in sorted(seen.items()):
        count = total - len({i for i in indices if 1 <= i <= total})
        first = islice((i for i in range(1, total + 1) if i not in indices), 3)
        shown = ", ".join(f"{i}/{total}" for i in first) + (" …" if count > 3 else "")
        missing += [f"{shown} ({count} of {total} missing)"] if count else []
    return "; ".join(missing)
