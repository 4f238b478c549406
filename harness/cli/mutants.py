"""`killpoint mutants`: hunt every mutant engine and show which checker caught it, and how fast.

Each mutant (the reference engine with one of the seeds' mistakes, from the installed
catalogues) is hunted in a world of its own with the campaign's plan, smallest schedules first,
until a run is judged false. The table shows the first checker that objected, how many runs that
took and the failing schedule, saved as JSON, with the `killpoint replay FILE` that re-runs it.
Exit status 1 if any mutant escapes: a harness that cannot catch a known mistake is not done.
It is the harness's self-test: a team's own engine is hunted by `killpoint hunt --engine`.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Annotated

import typer

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign import launch
from killpoint.harness.campaign.hunt import HuntOutcome
from killpoint.harness.cli._app import app
from killpoint.harness.cli._console import ci_console, line, mutant_table, table
from killpoint.harness.cli._flags import with_options
from killpoint.harness.cli._hunts import MutantOption, chosen_mutants, hunt_outcomes
from killpoint.harness.cli._progress import progress
from killpoint.harness.cli._shared import (
    WORKDIR,
    JsonOption,
    QuietOption,
    WorkdirOption,
    checkpoint_key,
    fresh_folder,
)
from killpoint.harness.cli._summary import replay_command
from killpoint.harness.options import CampaignOptions

ReportOption = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH",
        help="Write an HTML report of the hunts: each caught "
        "engine's violation with its timeline and replay command.",
        show_default=False,
    ),
]
# `--engine` moved to `killpoint hunt`: still read, to say so rather than "no such option"
MovedEngineOption = Annotated[str | None, typer.Option("--engine", hidden=True)]


@app.command()
@with_options("mutants", without=("engine",))
def mutants(
    options: CampaignOptions,
    mutant: MutantOption = None,
    engine: MovedEngineOption = None,
    workdir: WorkdirOption = WORKDIR,
    as_json: JsonOption = False,
    report: ReportOption = None,
    quiet: QuietOption = False,
) -> None:
    """Run the campaign against each mutant engine until the oracle catches it: the harness's
    self-test (hunt your own engine with `killpoint hunt --engine`)."""
    if engine is not None:
        raise KillpointError(
            f"mutants hunts the catalogue's mutants; hunt your engine with "
            f"`killpoint hunt --engine {shlex.quote(engine)}`"
        )
    checkpoint_key(use="scratch")
    chosen = launch.every_scenario(options.scenarios)
    targets = [(n, spec, spec.description) for n, spec in chosen_mutants(mutant).items()]
    folder = fresh_folder(workdir, "mutants")
    shown = progress(quiet)
    started = time.perf_counter()
    try:
        outcomes = hunt_outcomes(targets, chosen, folder, options, shown)
    finally:
        shown.close()
    if report is not None:
        from killpoint.harness.results import hunt_report
        from killpoint.reports import write_html

        hunts = hunt_report([o.result for o in outcomes], time.perf_counter() - started)
        typer.echo(f"report: {write_html(hunts, report)}", err=True)
    if as_json:
        typer.echo(json.dumps([_row(o) for o in outcomes], indent=2))
    else:
        _print_table(outcomes, len(chosen))
    if any(not o.result.caught for o in outcomes):
        raise typer.Exit(1)


def _row(outcome: HuntOutcome) -> dict[str, object]:
    r = outcome.result
    return {
        "mutant": r.mutant,
        "caught": r.caught,
        "checker": r.checker,
        "runs_to_detection": r.runs_to_detection,
        "found_by": r.found_by,
        "seconds_to_detection": r.seconds_to_detection,
        "schedule": r.schedule.model_dump(mode="json") if r.schedule else None,
        "schedule_file": r.schedule_file,
        "description": r.description,
    }


def _print_table(outcomes: list[HuntOutcome], scenarios: int) -> None:
    """One row per engine hunted; below the table, the replay command of each caught one,
    each on a line of its own so it can be pasted whole."""
    console = ci_console()
    table(
        console,
        mutant_table([o.result for o in outcomes], f"mutants hunted over {scenarios} scenario(s)"),
    )
    for o in outcomes:
        path = o.result.schedule_file
        if path:
            line(console, f"replay {o.result.mutant}: {replay_command(path)}")
    escaped = [o.result.mutant for o in outcomes if not o.result.caught]
    line(
        console,
        f"{len(outcomes) - len(escaped)}/{len(outcomes)} mutants caught"
        + (f"; escaped: {', '.join(escaped)}" if escaped else ""),
    )
