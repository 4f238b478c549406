"""`killpoint run`: a crash campaign over the chosen scenarios, judged run by run.

It crashes every boundary of the chosen scenarios (twice where the budget allows), adds the
network faults and the scenarios' named cases, judges every run and exits 1 on any violation;
each violating run leaves its schedule as JSON for `killpoint replay FILE`. `--shard i/N` runs a
deterministic slice and `--out` keeps its result, which `merge` combines into one report; `--jobs
N` runs N shards in N processes and merges them. The campaign flags are `CampaignOptions`'.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign import launch, preflight
from killpoint.harness.cli import clean
from killpoint.harness.cli._app import app
from killpoint.harness.cli._flags import with_options
from killpoint.harness.cli._hunts import MutantOption, chosen_mutants, mutation_score
from killpoint.harness.cli._progress import progress
from killpoint.harness.cli._shared import (
    WORKDIR,
    JsonOption,
    QuietOption,
    WorkdirOption,
    checkpoint_key,
    fresh_folder,
)
from killpoint.harness.cli._summary import print_summary, write_outputs
from killpoint.harness.cli._trend import TrendOption, check_trend
from killpoint.harness.options import CampaignOptions
from killpoint.harness.run.world import TENANT

ReportOption = Annotated[
    Path | None, typer.Option(metavar="PATH", help="Write the HTML report.", show_default=False)
]
JunitOption = Annotated[
    Path | None, typer.Option(metavar="PATH", help="Write JUnit XML.", show_default=False)
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH", help="Write the campaign result JSON (for `merge`).", show_default=False
    ),
]


@app.command()
@with_options("run")
def run(
    options: CampaignOptions,
    workdir: WorkdirOption = WORKDIR,
    report: ReportOption = None,
    junit: JunitOption = None,
    out: OutOption = None,
    trend: TrendOption = None,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    mutants: Annotated[
        bool, typer.Option(help="Also hunt every mutant engine and report the mutation score.")
    ] = False,
    mutant: MutantOption = None,
    keep_campaigns: Annotated[
        int, typer.Option(min=0, metavar="N", help="Campaign folders kept in --workdir (0: all).")
    ] = clean.DEFAULT_KEEP,
) -> None:
    """Crash every boundary of every scenario, recover, and judge each run."""
    if options.jobs > 1 and options.shard is not None:
        raise KillpointError("--shard runs one slice in one process; leave out --jobs")
    if trend is not None and options.shard is not None:
        raise KillpointError("--trend records a whole build: give it to `merge`, not to a shard")
    preflight.outputs({"--report": report, "--junit": junit, "--out": out}, workdir)
    check_trend(trend)
    preflight.database(options.db)
    checkpoint_key(use="scratch")
    engine = launch.resolve_engine(options.engine)
    chosen = launch.every_scenario(options.scenarios, engine)
    if mutant and not mutants:
        raise KillpointError("--mutant picks the mutants that --mutants hunts: add --mutants")
    hunted_mutants = chosen_mutants(mutant)
    clean.bound_campaigns(workdir, keep_campaigns)
    shown, started = progress(quiet), time.perf_counter()
    folder = fresh_folder(workdir, "campaign")
    try:
        result = launch.start(
            chosen, engine, options, folder, on_run=shown.ran, on_plan=shown.planned
        )
        if mutants:
            hunted = mutation_score(hunted_mutants, chosen, folder / "mutants", options, shown)
            result = result.model_copy(update={"mutants": hunted})
    finally:
        shown.close()
    result = result.model_copy(update={"wall_s": time.perf_counter() - started})
    written, unwritten = write_outputs(result, report, junit, out, keep_in=folder, trend=trend)
    kept = sorted([*folder.glob("queue.sqlite"), *folder.glob("shard-*/queue.sqlite")])
    written += [f"queue: killpoint queue --db sqlite:///{q} --tenant {TENANT}" for q in kept]
    print_summary(result, as_json, written)
    if unwritten:
        raise KillpointError(unwritten)
    if result.violations or any(not m.caught for m in result.mutants):
        raise typer.Exit(1)
