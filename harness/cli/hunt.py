"""`killpoint hunt --engine ENGINE`: hunt a team's own engine for its smallest violations.

The campaign's plan against the engine, smallest schedules first (`campaign.hunt`), on to the
end of the plan: each class of violation (the checker that objected first, the kind of the last
fault: `findings.violation_groups`) is shown by its smallest schedule, with its checker's
one-line summary and the `killpoint replay FILE` that re-runs it, then the runs and violations
per phase. `--first` stops at the first violation. Exit status 1 when a violation is found, 0
when the whole plan passes; a run judged unknown is listed (its schedule saved too) and is not
counted as a pass, but does not by itself fail the hunt. `killpoint mutants` is the harness's
own self-test, against its catalogue of mutants.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign import hunt as hunting
from killpoint.harness.campaign import launch
from killpoint.harness.cli._app import app
from killpoint.harness.cli._console import ci_console, line
from killpoint.harness.cli._flags import with_options
from killpoint.harness.cli._progress import progress
from killpoint.harness.cli._shared import (
    WORKDIR,
    JsonOption,
    QuietOption,
    WorkdirOption,
    checkpoint_key,
    fresh_folder,
)
from killpoint.harness.cli._summary import phases_line, print_groups, totals
from killpoint.harness.findings import violation_groups
from killpoint.harness.options import CampaignOptions
from killpoint.harness.results import RunResult, Verdict, combine
from killpoint.harness.schedule import save_schedule

FirstOption = Annotated[
    bool,
    typer.Option(
        "--first", help="Stop at the first violation (default: one of each class, to the end)."
    ),
]


@app.command()
@with_options("mutants", without=("jobs",))
def hunt(
    options: CampaignOptions,
    first: FirstOption = False,
    workdir: WorkdirOption = WORKDIR,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Hunt your engine for the smallest violation of each class. Exit status 1 when one is
    found, 0 when the whole plan passes; unknown verdicts are listed, not counted as passes,
    and do not by themselves fail the hunt."""
    if options.engine is None:
        raise KillpointError("hunt needs the engine to hunt: --engine ENGINE (see --help)")
    checkpoint_key(use="scratch")
    spec = launch.resolve_engine(options.engine)
    chosen = launch.every_scenario(options.scenarios, spec)
    folder = fresh_folder(workdir, "hunt")
    shown = progress(quiet)
    try:
        hunted = hunting.engine_hunt(spec, chosen, folder, options, first=first, on_run=shown.ran)
    finally:
        shown.close()
    runs = _saved(hunted.runs, folder)
    if as_json:
        typer.echo(json.dumps(_json(hunted, runs, len(chosen)), indent=2))
    else:
        _print(hunted, runs, len(chosen))
    if any(run.valid is False for run in runs):
        raise typer.Exit(1)


def _saved(runs: Sequence[RunResult], folder: Path) -> list[RunResult]:
    """The runs, each class of unknown's smallest with its schedule saved (a violating run's
    is already), so that it too has its replay command."""
    unknown = [r for r in runs if r.valid == "unknown"]
    smallest = {id(g.smallest) for g in violation_groups(unknown)}
    return [
        run.model_copy(update={"schedule_file": str(_save(run, folder))})
        if id(run) in smallest and run.schedule_file is None
        else run
        for run in runs
    ]


def _save(run: RunResult, folder: Path) -> Path:
    return save_schedule(run.schedule, folder / "schedules" / f"{run.scenario}-{run.run_id}.json")


def _print(hunted: hunting.EngineHunt, runs: Sequence[RunResult], scenarios: int) -> None:
    console = ci_console()
    violating = [r for r in runs if r.valid is False]
    unknown = [r for r in runs if r.valid == "unknown"]
    if violating:
        found = "violations found in the whole plan"
        if not hunted.whole:
            found = "a violation found; --first stopped the hunt there"
        line(console, ("FAIL ", "bold red"), f"{hunted.engine}: {found}")
    else:  # a hunt that finds nothing makes the whole plan
        doubted = f"; {len(unknown)} run(s) unknown, not passes: listed below" if unknown else ""
        line(
            console,
            ("PASS ", "bold green"),
            f"{hunted.engine}: no violation in the whole plan{doubted}",
        )
    print_groups(console, violating, False, "--json")
    print_groups(console, unknown, "unknown", "--json")
    line(console, f"{totals(runs, f'{hunted.seconds:.1f}s')} over {scenarios} scenario(s)")
    line(console, phases_line(runs))


def _json(
    hunted: hunting.EngineHunt, runs: Sequence[RunResult], scenarios: int
) -> dict[str, object]:
    from killpoint.reports.metrics import groups_json, phases_json

    return {
        "engine": hunted.engine,
        "valid": combine([Verdict(checker=r.run_id, valid=r.valid) for r in runs]),
        "whole_plan": hunted.whole,
        "scenarios": scenarios,
        "runs": len(runs),
        "violating": sum(r.valid is False for r in runs),
        "unknown": sum(r.valid == "unknown" for r in runs),
        "seconds": round(hunted.seconds, 2),
        "phases": phases_json(runs),
        "violation_groups": groups_json([r for r in runs if r.valid is False]),
        "unknown_groups": groups_json([r for r in runs if r.valid == "unknown"]),
    }
