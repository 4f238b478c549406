"""`killpoint replay FILE`: one fault schedule re-run exactly, in its tier, and judged again.

The schedule names its scenario, tier and engine, so the file alone reproduces the run, a team's
`module:factory` engine included; `--engine` replays it against another one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign import preflight
from killpoint.harness.cli._app import app
from killpoint.harness.cli._flags import with_options
from killpoint.harness.cli._shared import (
    WORKDIR,
    JsonOption,
    WorkdirOption,
    checkpoint_key,
    fresh_folder,
)
from killpoint.harness.history import History
from killpoint.harness.objectives import measure_objectives
from killpoint.harness.options import CampaignOptions
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import Verdict
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, load_schedule

MARKS = {True: "ok", False: "VIOLATION", "unknown": "unknown"}


@app.command()
@with_options("replay")
def replay(
    options: CampaignOptions,
    schedule_file: Annotated[Path, typer.Argument(metavar="FILE", help="A fault schedule.")],
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            metavar="MODULE:FACTORY",
            help="Replay against this engine instead of the one the schedule names.",
            show_default=False,
        ),
    ] = None,
    workdir: WorkdirOption = WORKDIR,
    history: Annotated[
        Path | None,
        typer.Option(metavar="PATH", help="Write the run's history JSON.", show_default=False),
    ] = None,
    as_json: JsonOption = False,
    allow_unreached: Annotated[
        bool,
        typer.Option(
            "--allow-unreached",
            help="Pass a run whose crash points were never reached (by default an error: the "
            "schedule fits another engine or version, and tested nothing).",
        ),
    ] = False,
) -> None:
    """Re-run one fault schedule exactly, in the tier it names, and judge it again."""
    from killpoint.harness.campaign.execute import open_world, run_in_tier

    schedule, scenario, spec = _load(schedule_file, engine)
    preflight.outputs({"--history": history}, workdir)
    preflight.database(options.db)
    checkpoint_key(use="scratch")
    root = fresh_folder(workdir / "replays", schedule.run_id)
    with open_world(schedule.tier, root, options.db) as world:
        result = run_in_tier(world, scenario, schedule, spec)
    verdicts = _judge(result, scenario, schedule)
    if history is not None:
        from killpoint.reports import write_atomic

        write_atomic(history, result.model_dump_json(indent=2))
    if as_json:
        typer.echo(json.dumps(_document(scenario, schedule, result, verdicts), indent=2))
    else:
        typer.echo("\n".join(_lines(scenario, schedule, result, verdicts)))
    if any(v.valid is False for v in verdicts):
        raise typer.Exit(1)
    missed = _missed(result, schedule)
    if missed and not allow_unreached:
        raise KillpointError(
            f"crash point(s) never reached: {', '.join(missed)}: the schedule fits another "
            "engine or version and tested nothing here (--allow-unreached accepts that)"
        )


def _load(schedule_file: Path, engine: str | None) -> tuple[FaultSchedule, Scenario, EngineSpec]:
    """The schedule, its scenario from the installed catalogues, and the engine to run."""
    from killpoint.harness.catalogue import installed
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
    return schedule.model_copy(update={"engine": spec.ref}), scenario, spec


def _judge(result: History, scenario: Scenario, schedule: FaultSchedule) -> list[Verdict]:
    """The oracle's verdicts, the named case's expected recovery, and a warning for any crash
    point the run never reached (a schedule written for another engine or version)."""
    from killpoint.harness.campaign.execute import expectation
    from killpoint.harness.checkers import check_all

    verdicts = check_all(result, scenario.workflow)
    case = scenario.case(schedule.run_id)
    if case is not None:
        verdicts.append(expectation(result, case.expect))
    missed = _missed(result, schedule)
    if missed:
        typer.echo(
            f"killpoint: warning: crash point(s) never reached: {', '.join(missed)}", err=True
        )
    return verdicts


def _missed(result: History, schedule: FaultSchedule) -> list[str]:
    died = {w.worker for w in result.deaths}
    return [c.label() for c in schedule.crashes if c.worker not in died]


def _document(
    scenario: Scenario, schedule: FaultSchedule, result: History, verdicts: list[Verdict]
) -> dict[str, object]:
    return {
        "scenario": scenario.name,
        "schedule": schedule.describe(),
        "final_status": result.final_status,
        "verdicts": [v.model_dump(mode="json") for v in verdicts],
        "objectives": measure_objectives(result, scenario.objectives).model_dump(mode="json"),
    }


def _lines(
    scenario: Scenario, schedule: FaultSchedule, result: History, verdicts: list[Verdict]
) -> list[str]:
    lines = [
        f"{scenario.name}: {schedule.describe()} → {result.final_status} "
        f"({result.final_reason or 'no reason given'})"
    ]
    for v in verdicts:
        lines.append(f"  {v.checker:20} {MARKS[v.valid]:9} {v.summary}")
        lines.extend(f"      {line}" for line in (v.evidence if v.valid is False else ()))
    from killpoint.reports.objectives_view import run_line

    judged = measure_objectives(result, scenario.objectives)
    if judged.crashes:  # flagged, not a verdict: a miss is no violation
        lines.append(f"  {run_line(judged)}")
    return lines
