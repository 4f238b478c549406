"""`killpoint merge`: shard results (`run --shard i/N --out …`) combined into one campaign."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign import preflight
from killpoint.harness.cli._app import app
from killpoint.harness.cli._shared import JsonOption
from killpoint.harness.cli._summary import print_summary, write_outputs
from killpoint.harness.cli._trend import TrendOption, check_trend
from killpoint.harness.results import load_result

PathOption = Annotated[Path | None, typer.Option(metavar="PATH", show_default=False)]


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
    as_json: JsonOption = False,
) -> None:
    """Combine shard results into one campaign result and report."""
    from killpoint.harness.campaign.merge import merge_results

    preflight.outputs({"--report": report, "--junit": junit, "--out": out})
    check_trend(trend)
    merged = merge_results([load_result(path) for path in results])
    written, unwritten = write_outputs(merged, report, junit, out, trend=trend)
    print_summary(merged, as_json, written)
    if unwritten:
        raise KillpointError(unwritten)
    if merged.violations:
        raise typer.Exit(1)
