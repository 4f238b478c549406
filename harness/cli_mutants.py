"""`killpoint mutants`: hunt every mutant engine and show which checker caught it, and how fast.

Each mutant (the reference engine with one of the seeds' mistakes, `scenarios.mutants`) is
hunted in a world of its own with the campaign's plan, smallest schedules first, until a run is
judged false. The table shows the first checker that objected, how many runs that took and the
failing schedule, saved as JSON for `killpoint replay FILE`. Exit status 1 if any mutant
escapes: a harness that cannot catch a known mistake is not done.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from killpoint.harness.cli import app, checkpoint_key
from killpoint.harness.contract.errors import KillpointError


def _fresh(root: Path) -> Path:
    """A new folder under `root`: every hunt needs an empty store."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path, n = root / f"mutants-{stamp}", 1
    while path.exists():
        n += 1
        path = root / f"mutants-{stamp}-{n}"
    return path


@app.command()
def mutants(
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            "-s",
            metavar="NAME",
            help="Scenario to hunt with (repeatable; default all).",
            show_default=False,
        ),
    ] = None,
    mutant: Annotated[
        list[str] | None,
        typer.Option(
            "--mutant",
            "-m",
            metavar="NAME",
            help="Mutant to hunt (repeatable; default all).",
            show_default=False,
        ),
    ] = None,
    workdir: Annotated[
        Path,
        typer.Option("--workdir", metavar="DIR", help="Where stores and failing schedules go."),
    ] = Path("killpoint-out"),
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the paired-crash sample.")] = 0,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            metavar="MODULE:FACTORY",
            help="Hunt this engine instead of the built-in mutants (a team's own broken one).",
            show_default=False,
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            help="Write an HTML report of the hunts: each caught "
            "engine's violation with its timeline and replay command.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        str,
        typer.Option(metavar="N|auto", help="Processes to hunt in (auto: one per core)."),
    ] = "1",
) -> None:
    """Run the campaign against each mutant engine until the oracle catches it."""
    from killpoint.harness.catalogue import installed
    from killpoint.harness.hunt import HuntOutcome, hunt_outcome
    from killpoint.harness.jobs import hunts_in_processes, resolve_jobs

    processes = resolve_jobs(jobs)
    checkpoint_key()
    catalogue = installed()
    MUTANTS = catalogue.mutants
    chosen = (
        [catalogue.scenario(name) for name in scenario]
        if scenario
        else list(catalogue.scenarios.values())
    )
    unknown = [name for name in mutant or () if name not in MUTANTS]
    if unknown:
        raise KillpointError(
            f"no mutant named {', '.join(map(repr, unknown))}; known: {', '.join(MUTANTS)}"
        )
    if engine is not None:
        from killpoint.harness.engines.registry import load_engine

        targets = [(engine, load_engine(engine), "the engine under test")]
    else:
        names = list(mutant) if mutant else list(MUTANTS)
        targets = [(name, MUTANTS[name], MUTANTS[name].description) for name in names]
    root = _fresh(workdir)

    def hunt(name: str, spec: Any, why: str) -> Callable[[], HuntOutcome]:
        folder = root / name.replace(":", "_")
        return lambda: hunt_outcome(spec, chosen, folder, seed, description=why)

    outcomes = hunts_in_processes([hunt(*target) for target in targets], processes)
    rows = [(o.result, o.run.schedule_file if o.run else None) for o in outcomes]
    if report is not None:
        from killpoint.harness.results import hunt_report
        from killpoint.reports import write_html

        typer.echo(f"report: {write_html(hunt_report(outcomes), report)}", err=True)
    if as_json:
        doc = [
            {
                "mutant": r.mutant,
                "caught": r.caught,
                "checker": r.checker,
                "runs_to_detection": r.runs_to_detection,
                "schedule": r.schedule.model_dump(mode="json") if r.schedule else None,
                "schedule_file": path,
                "description": r.description,
            }
            for r, path in rows
        ]
        typer.echo(json.dumps(doc, indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"mutants hunted over {len(chosen)} scenario(s)")
        for column in ("mutant", "caught", "checker", "runs", "minimal schedule"):
            table.add_column(column, overflow="fold")
        for r, path in rows:
            schedule = (
                f"{r.schedule.scenario}: {r.schedule.describe()}\n{path}" if r.schedule else "—"
            )
            table.add_row(
                r.mutant,
                "yes" if r.caught else "[bold red]ESCAPED[/]",
                r.checker or "—",
                str(r.runs_to_detection or "—"),
                schedule,
            )
        Console(width=160).print(table)
        escaped = [r.mutant for r, _ in rows if not r.caught]
        typer.echo(
            f"{len(rows) - len(escaped)}/{len(rows)} mutants caught"
            + (f"; escaped: {', '.join(escaped)}" if escaped else "")
        )
    if any(not r.caught for r, _ in rows):
        raise typer.Exit(1)
