"""`killpoint mutants`: hunt every mutant engine and show which checker caught it, and how fast.

Each mutant (the reference engine with one of the seeds' mistakes, from the installed
catalogues) is hunted in a world of its own with the campaign's plan, smallest schedules first,
until a run is judged false. The table shows the first checker that objected, how many runs that
took and the failing schedule, saved as JSON, with the `killpoint replay FILE` that re-runs it.
Exit status 1 if any mutant escapes: a harness that cannot catch a known mistake is not done.

With `--engine`, the one engine hunted is a team's own that it expects to be broken (to show
that the oracle catches it); it is spoken of as an engine, not a mutant: exit status 0 when a
violation was found, 1 when it passed every schedule. An engine expected to pass is checked by
`killpoint run --engine`, whose exit status is 1 on a violation.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from killpoint.harness.campaign import launch
from killpoint.harness.campaign.hunt import HuntOutcome
from killpoint.harness.cli._app import app
from killpoint.harness.cli._console import ci_console, line, mutant_table, table
from killpoint.harness.cli._flags import with_options
from killpoint.harness.cli._hunts import MutantOption, Target, chosen_mutants, hunt_outcomes
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


@app.command()
@with_options("mutants")
def mutants(
    options: CampaignOptions,
    mutant: MutantOption = None,
    workdir: WorkdirOption = WORKDIR,
    as_json: JsonOption = False,
    report: ReportOption = None,
    quiet: QuietOption = False,
) -> None:
    """Run the campaign against each mutant engine until the oracle catches it."""
    checkpoint_key(use="scratch")
    chosen = launch.every_scenario(options.scenarios)
    targets, folder = _targets(options, mutant), fresh_folder(workdir, "mutants")
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
    own = options.engine is not None
    if as_json:
        typer.echo(json.dumps([_row(o, own) for o in outcomes], indent=2))
    elif own:
        _print_engine(outcomes[0], len(chosen))
    else:
        _print_table(outcomes, len(chosen))
    if any(not o.result.caught for o in outcomes):
        raise typer.Exit(1)


def _targets(options: CampaignOptions, names: Sequence[str] | None) -> list[Target]:
    """The engine named by `--engine` (a team's own broken one), else the mutants asked for."""
    chosen = chosen_mutants(names)
    if options.engine is not None:
        return [(options.engine, launch.resolve_engine(options.engine), "the engine under test")]
    return [(n, spec, spec.description) for n, spec in chosen.items()]


def _row(outcome: HuntOutcome, own: bool = False) -> dict[str, object]:
    r = outcome.result
    return {
        ("engine" if own else "mutant"): r.mutant,
        ("violation_found" if own else "caught"): r.caught,
        "checker": r.checker,
        "runs_to_detection": r.runs_to_detection,
        "found_by": r.found_by,
        "seconds_to_detection": r.seconds_to_detection,
        "schedule": r.schedule.model_dump(mode="json") if r.schedule else None,
        "schedule_file": r.schedule_file,
        "description": r.description,
    }


def _print_engine(outcome: HuntOutcome, scenarios: int) -> None:
    """The hunt of a team's own engine, in an engine's words."""
    r = outcome.result
    if not r.caught:
        typer.echo(
            f"{r.mutant}: no violation found over {scenarios} scenario(s): it passed every "
            "schedule of the plan and the exploration. `killpoint mutants --engine` expects a "
            "broken engine; check one expected to pass with `killpoint run --engine`."
        )
        return
    assert r.schedule is not None
    typer.echo(
        f"{r.mutant}: violation found by {r.checker} after {r.runs_to_detection} run(s) "
        f"({r.found_by}), in {r.schedule.scenario}: {r.schedule.describe()}"
    )
    path = r.schedule_file
    if path:
        typer.echo(f"replay: {replay_command(path)}")


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
