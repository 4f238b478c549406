"""`killpoint run`, `replay` and `merge`: crash campaigns, exact replays, sharded results.

`run` crashes every boundary of the chosen scenarios (twice where the budget allows), adds the
network faults and the seeds' named cases, judges every run and exits 1 on any violation; each
violating run leaves its schedule as JSON, and `replay FILE` re-runs exactly that schedule.
`--shard i/N` runs a deterministic slice and `--out` keeps its result, which `merge` combines
into one report.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import ValidationError

from killpoint.harness.cli import DbOption, app, checkpoint_key
from killpoint.harness.contract.errors import KillpointError
from killpoint.harness.results import CampaignResult, RunResult
from killpoint.harness.schedule import load_schedule

WorkdirOption = Annotated[
    Path,
    typer.Option(
        "--workdir", metavar="DIR", help="Where stores, artifacts and failing schedules go."
    ),
]
EngineOption = Annotated[
    str | None,
    typer.Option(
        "--engine",
        metavar="MODULE:FACTORY",
        help="The engine under test (default: the reference engine).",
        show_default=False,
    ),
]


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        index, total = (int(part) for part in text.split("/"))
    except ValueError:
        raise KillpointError(f"--shard wants i/N (e.g. 1/4), got {text!r}") from None
    if not 1 <= index <= total:
        raise KillpointError(f"--shard {text}: i must be between 1 and N")
    return index, total


def _progress(enabled: bool) -> tuple[Callable[[RunResult], None], Callable[[], None]]:
    """A live count of runs and violations on a terminal; nothing when piped (as in CI)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        return (lambda result: None), (lambda: None)
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = progress.add_task("starting", total=None)
    counts = {"runs": 0, "violations": 0}
    progress.start()

    def on_run(result: RunResult) -> None:
        counts["runs"] += 1
        counts["violations"] += result.valid is False
        progress.update(
            task,
            description=f"{result.scenario}: {counts['runs']} runs, "
            f"{counts['violations']} violations",
        )

    return on_run, progress.stop


def _write_outputs(
    result: CampaignResult, report: Path | None, junit: Path | None, out: Path | None
) -> list[str]:
    written = []
    if report is not None:
        from killpoint.reports import write_html

        written.append(f"report: {write_html(result, report)}")
    if junit is not None:
        from killpoint.reports import write_junit

        written.append(f"junit: {write_junit(result, junit)}")
    if out is not None:
        from killpoint.reports import write_atomic

        written.append(f"result: {write_atomic(out, result.model_dump_json())}")
    return written


def _print_summary(result: CampaignResult, as_json: bool, written: list[str]) -> None:
    from killpoint.reports import summary_json

    summary = summary_json(result)
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"killpoint campaign — {result.engine}, {result.tier}, {result.backend}")
    for column in ("scenario", "boundaries", "crashed", "runs", "violations"):
        table.add_column(column, justify="left" if column == "scenario" else "right")
    for cov in result.scenarios:
        table.add_row(
            cov.scenario,
            str(len(cov.boundaries_discovered)),
            str(len(cov.boundaries_crashed)),
            str(cov.runs),
            f"[red]{cov.violations}[/red]" if cov.violations else "0",
        )
    console.print(table)
    for v in summary["violations"][:20]:
        console.print(f"[red]✗[/red] {v['scenario']} [{v['checker']}] {v['summary']}")
        if v["schedule_file"]:
            console.print(f"    replay: killpoint replay {v['schedule_file']}")
    from killpoint.reports import campaign_metrics

    m = campaign_metrics(result)
    figures = [
        f"resume success {_pct(m.resume_success.value)}",
        f"duplicate effects {_pct(m.duplicate_effects.value)}",
        f"needs review {_pct(m.needs_review.value)}",
        f"within budget {_pct(m.within_budget.value)}",
        f"recovery p50 {_num(m.recovery_time.steps.p50)} steps",
        f"boundaries crashed {m.coverage.crashed}/{m.coverage.discovered}",
    ]
    if m.mutation_score is not None:
        figures.append(f"mutants caught {m.mutation_score.count}/{m.mutation_score.of}")
    console.print(
        f"{len(result.runs)} runs in {result.duration_s:.1f}s, "
        f"{len(result.violations)} violating; " + ", ".join(figures)
    )
    for line in written:
        console.print(line)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:g}"


@app.command()
def run(
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            "-s",
            metavar="NAME",
            help="Scenario to run (repeatable; default all).",
            show_default=False,
        ),
    ] = None,
    tier: Annotated[
        Literal["inprocess", "real"],
        typer.Option(
            help="inprocess: injected exceptions; real: forked workers killed by SIGKILL, services "
            "over loopback HTTP."
        ),
    ] = "inprocess",
    db: DbOption = None,
    workdir: WorkdirOption = Path("killpoint-out"),
    engine: EngineOption = None,
    report: Annotated[
        Path | None, typer.Option(metavar="PATH", help="Write the HTML report.", show_default=False)
    ] = None,
    junit: Annotated[
        Path | None, typer.Option(metavar="PATH", help="Write JUnit XML.", show_default=False)
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH", help="Write the campaign result JSON (for `merge`).", show_default=False
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    double: Annotated[bool, typer.Option(help="Also crash each recovery.")] = True,
    double_limit: Annotated[
        int, typer.Option(metavar="N", min=0, help="Paired crashes per scenario before sampling.")
    ] = 150,
    interleave: Annotated[
        bool,
        typer.Option(help="Also let two workers recover each crash at once (in-process tier)."),
    ] = True,
    network: Annotated[bool, typer.Option(help="Also inject network faults.")] = True,
    named: Annotated[bool, typer.Option(help="Also run the seeds' named cases.")] = True,
    seed: Annotated[int, typer.Option(help="Seed of the paired-crash sample.")] = 0,
    shard: Annotated[
        str | None, typer.Option(metavar="i/N", help="Run only this slice.", show_default=False)
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show progress on a terminal.")] = True,
    mutants: Annotated[
        bool, typer.Option(help="Also hunt every mutant engine and report the mutation score.")
    ] = False,
    jobs: Annotated[
        str,
        typer.Option(
            metavar="N|auto",
            help="Processes to run the campaign in (one shard each, merged); auto: one per core.",
        ),
    ] = "1",
) -> None:
    """Crash every boundary of every scenario, recover, and judge each run."""
    from killpoint.harness.campaign import CampaignConfig
    from killpoint.harness.catalogue import installed
    from killpoint.harness.engines.registry import load_engine
    from killpoint.harness.jobs import resolve_jobs, run_campaign

    processes = resolve_jobs(jobs)
    if processes > 1 and shard is not None:
        raise KillpointError("--shard runs one slice in one process; leave out --jobs")
    checkpoint_key()
    catalogue = installed()
    chosen = (
        [catalogue.scenario(name) for name in scenario]
        if scenario
        else list(catalogue.scenarios.values())
    )
    on_run, stop = _progress(progress and not as_json)
    workdir.mkdir(parents=True, exist_ok=True)
    workdir = Path(
        tempfile.mkdtemp(prefix=f"campaign-{time.strftime('%Y%m%d-%H%M%S')}-", dir=workdir)
    )
    config = CampaignConfig(
        scenarios=chosen,
        workdir=workdir,
        engine=load_engine(engine),
        tier=tier,
        store_url=db,
        double=double,
        double_limit=double_limit,
        interleave=interleave,
        network=network,
        named=named,
        seed=seed,
        shard=parse_shard(shard),
        on_run=on_run,
    )
    try:
        result = run_campaign(config, processes)
        if mutants:
            hunted = _hunt_mutants(
                chosen,
                workdir,
                seed,
                processes,
                double=double,
                double_limit=double_limit,
                interleave=interleave,
                network=network,
            )
            result = result.model_copy(update={"mutants": hunted})
    finally:
        stop()
    _print_summary(result, as_json, _write_outputs(result, report, junit, out))
    if result.violations or any(not m.caught for m in result.mutants):
        raise typer.Exit(1)


def _hunt_mutants(
    chosen: list[Any], workdir: Path, seed: int, processes: int, **phases: Any
) -> list[Any]:
    """Each mutant hunted with the campaign's own plan, until the oracle catches it."""
    from killpoint.harness.catalogue import installed
    from killpoint.harness.hunt import hunt_outcome
    from killpoint.harness.jobs import hunts_in_processes

    mutants = installed().mutants

    def hunt(name: str) -> Callable[[], Any]:
        folder, spec = workdir / "mutants" / name, mutants[name]
        return lambda: hunt_outcome(
            spec, chosen, folder, seed, description=spec.description, **phases
        ).result

    return hunts_in_processes([hunt(name) for name in mutants], processes)


@app.command()
def replay(
    schedule_file: Annotated[Path, typer.Argument(metavar="FILE", help="A fault schedule.")],
    engine: EngineOption = None,
    db: DbOption = None,
    workdir: WorkdirOption = Path("killpoint-out"),
    history: Annotated[
        Path | None,
        typer.Option(metavar="PATH", help="Write the run's history JSON.", show_default=False),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print verdicts as JSON.")] = False,
) -> None:
    """Re-run one fault schedule exactly, in the tier it names, and judge it again."""
    from killpoint.harness.campaign import expectation, open_world, run_in_tier
    from killpoint.harness.catalogue import installed
    from killpoint.harness.checkers import check_all
    from killpoint.harness.engines.registry import load_engine

    schedule = load_schedule(schedule_file)
    scenario = installed().scenario(schedule.scenario)
    ref = engine or schedule.engine
    if ref is None:
        raise KillpointError(
            f"{schedule_file} does not name its engine (it was handed to the harness as an "
            "object); pass --engine MODULE:FACTORY, or replay it through its pytest test"
        )
    spec = load_engine(ref)
    schedule = schedule.model_copy(update={"engine": spec.ref})
    checkpoint_key()
    (workdir / "replays").mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=f"{schedule.run_id}-", dir=workdir / "replays"))
    world = open_world(schedule.tier, root, db)
    try:
        result = run_in_tier(world, scenario, schedule, spec)
    finally:
        world.close()
    verdicts = check_all(result, scenario.workflow)
    case = scenario.case(schedule.run_id)
    if case is not None:
        verdicts.append(expectation(result, case.expect))
    died = {w.worker for w in result.deaths}
    missed = [c.label() for c in schedule.crashes if c.worker not in died]
    if missed:  # a schedule written for another engine or version may name hits that never come
        typer.echo(
            f"killpoint: warning: crash point(s) never reached: {', '.join(missed)}", err=True
        )
    if history is not None:
        from killpoint.reports import write_atomic

        write_atomic(history, result.model_dump_json(indent=2))
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "scenario": scenario.name,
                    "schedule": schedule.describe(),
                    "final_status": result.final_status,
                    "verdicts": [v.model_dump(mode="json") for v in verdicts],
                },
                indent=2,
            )
        )
    else:
        typer.echo(
            f"{scenario.name}: {schedule.describe()} → {result.final_status} "
            f"({result.final_reason or 'no reason given'})"
        )
        for v in verdicts:
            mark = {True: "ok", False: "VIOLATION", "unknown": "unknown"}[v.valid]
            typer.echo(f"  {v.checker:20} {mark:9} {v.summary}")
            for line in v.evidence if v.valid is False else ():
                typer.echo(f"      {line}")
    if any(v.valid is False for v in verdicts):
        raise typer.Exit(1)


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
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Combine shard results into one campaign result and report."""
    from killpoint.harness.merge import merge_results

    parts = []
    for path in results:
        try:
            parts.append(CampaignResult.model_validate_json(path.read_text()))
        except OSError as exc:
            raise KillpointError(f"cannot read {path}: {exc.strerror}") from exc
        except ValidationError as exc:
            raise KillpointError(
                f"{path} is not a killpoint campaign result: {exc.errors()[0]['msg']}"
            ) from exc
    merged = merge_results(parts)
    _print_summary(merged, as_json, _write_outputs(merged, report, junit, out))
    if merged.violations:
        raise typer.Exit(1)
