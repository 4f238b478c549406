"""How a campaign ends on the console and on disk: the summary and the report files.

Violations are shown smallest first, one class at a time (`findings.violation_groups`: the
checker that objected first, the kind of the last fault): each class's smallest run with the
command that replays it, complete as printed — the schedule names its engine and tier, so
`killpoint replay FILE` needs nothing else — then how many more runs the class holds. Wherever
a total is printed, the counts per phase (run kind) follow it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from killpoint.contract.errors import KillpointError
from killpoint.harness.cli._console import ci_console, line, mutant_table, table
from killpoint.harness.findings import phase_counts, violation_groups
from killpoint.harness.protocol import CLOCK
from killpoint.harness.results import CampaignResult, RunResult, Valid

if TYPE_CHECKING:
    from killpoint.reports.objectives import ObjectivesSummary

SHOWN_GROUPS = 20  # classes of violation shown in full; the result file lists the rest


def replay_command(schedule_file: str) -> str:
    return f"killpoint replay {shlex.quote(schedule_file)}"


def write_outputs(
    result: CampaignResult,
    report: Path | None,
    junit: Path | None,
    out: Path | None,
    keep_in: Path | None = None,
    trend: Path | None = None,
) -> tuple[list[str], str]:
    """Write the files asked for: one line per file written, for the summary, and what could
    not be written ("" when all was).

    The result JSON goes first, atomically: to `out`, or (when `out` is not asked for, or
    cannot be written) into `keep_in`, so a report that fails at the end (a full disk) loses
    nothing computed. This build's figures are appended to the `trend` history before the
    report, which draws them."""
    from functools import partial

    from killpoint.reports import write_atomic, write_html, write_junit
    from killpoint.reports.trends import append_trend, build_commit, trend_record

    written, failed = [], []
    json_text = result.model_dump_json()
    targets = [t for t in (out, keep_in / "result.json" if keep_in else None) if t is not None]
    for target in targets:
        try:
            written.append(f"result: {write_atomic(target, json_text)}")
            break
        except OSError as exc:
            failed.append(f"result {target}: {exc.strerror or exc}")
    if trend is not None:
        try:
            append_trend(trend, trend_record(result, build_commit()))
            written.append(f"trend: {trend}")
        except (OSError, KillpointError) as exc:
            failed.append(f"trend {trend}: {getattr(exc, 'strerror', None) or exc}")
            trend = None
    html = write_html if trend is None else partial(write_html, trend=trend)
    for name, path, writer in (("report", report, html), ("junit", junit, write_junit)):
        if path is None:
            continue
        try:
            written.append(f"{name}: {writer(result, path)}")
        except OSError as exc:
            failed.append(f"{name} {path}: {exc.strerror or exc}")
    if not failed:
        return written, ""
    kept = next((line for line in written if line.startswith("result: ")), None)
    kept_note = f"the {kept}" if kept else "no copy of the result could be kept"
    return written, f"could not write {'; '.join(failed)} ({kept_note})"


def print_summary(result: CampaignResult, as_json: bool, written: list[str]) -> None:
    """The per-scenario table, each violating run with its checkers and its replay command,
    the mutant table, the metrics, the files written."""
    from killpoint.reports import summary_json

    if as_json:
        typer.echo(json.dumps(summary_json(result), indent=2))
        return
    console = ci_console()
    table(console, _table(result))
    line(console, f"store: {result.backend}")
    kept = [x for x in result.lacks if x != CLOCK]
    if kept:
        line(
            console,
            f"{result.engine} keeps no {', '.join(kept)}: the checks that need them answer unknown",
        )
    if CLOCK in result.lacks:
        line(
            console,
            f"{result.engine} reads the wall clock, not the world clock: the cases that move "
            "time (a downtime, a clock jump, a lapsing lease) are not applicable to it",
        )
    violating = result.violations
    print_groups(console, violating, False)
    if result.mutants:
        table(console, mutant_table(result.mutants, "mutants hunted"))
    line(
        console,
        f"{totals(result.runs, _timed(result))}; " + ", ".join(_figures(result)),
    )
    line(console, phases_line(result.runs))
    deployed = _deploys(result)
    if deployed:
        line(console, deployed)
    for written_line in written:
        line(console, written_line)


def print_groups(
    console: Console, runs: Sequence[RunResult], valid: Valid, listed_in: str = "the result file"
) -> None:
    """The runs judged `valid` (False: violating; "unknown") by class, smallest first: each
    class's smallest run with its checker's summary, replay command and schedule, then how
    many more runs the class holds; the classes past `SHOWN_GROUPS` are left to `listed_in`."""
    groups = violation_groups(runs)
    if not groups:
        return
    mark, style, what = (
        ("✗ ", "red", "violating") if valid is False else ("? ", "yellow", "unknown")
    )
    line(
        console,
        (mark, style),
        f"{len(runs)} {what} run(s) in {len(groups)} class(es) (checker, fault), "
        "smallest schedule first:",
    )
    for group in groups[:SHOWN_GROUPS]:
        run = group.smallest
        doubted = [v for v in run.verdicts if v.valid == valid]
        # every objection of a violating run; of an unknown one, its class's (an engine without
        # a history reader leaves a dozen checks unknown on each run)
        shown = doubted if valid is False else [v for v in doubted if v.checker == group.checker]
        for v in shown:
            line(console, (mark, style), f"{run.scenario} [{v.checker}] {v.summary}")
        if len(doubted) > len(shown):
            line(console, f"    and {len(doubted) - len(shown)} more checks unknown on this run")
        if run.schedule_file:
            line(console, f"    replay: {replay_command(run.schedule_file)}")
        line(console, f"    {run.kind} run {run.run_id}: {run.label}")
        if len(group.runs) > 1:
            line(
                console,
                f"    and {len(group.runs) - 1} more of this class "
                f"({group.checker} after {group.fault})",
            )
    hidden = groups[SHOWN_GROUPS:]
    if hidden:
        line(
            console,
            f"… and {len(hidden)} more classes ({sum(len(g.runs) for g in hidden)} runs): "
            f"{listed_in} lists them all",
        )


def totals(runs: Sequence[RunResult], took: str) -> str:
    """`412 runs in 35.2s, 3 violating, 2 unknown`: the unknown runs named, never counted as
    passes."""
    violating = sum(r.valid is False for r in runs)
    unknown = sum(r.valid == "unknown" for r in runs)
    return f"{len(runs)} runs in {took}, {violating} violating, {unknown} unknown"


def phases_line(runs: Sequence[RunResult]) -> str:
    """`per phase: clean 2; single 40 (1 violating); pair 12 (1 unknown)`."""
    shown = []
    for count in phase_counts(runs):
        marks = [f"{count.violating} violating"] if count.violating else []
        marks += [f"{count.unknown} unknown"] if count.unknown else []
        shown.append(f"{count.phase} {count.runs}" + (f" ({', '.join(marks)})" if marks else ""))
    return "per phase: " + "; ".join(shown)


def _timed(result: CampaignResult) -> str:
    """The whole job's wall time, and the campaign's within it when the job did more."""
    if result.wall_s is None:
        return f"{result.duration_s:.1f}s"
    hunted = " with the mutant hunts" if result.mutants else ""
    return f"{result.wall_s:.1f}s for the whole job{hunted} (campaign {result.duration_s:.1f}s)"


def _table(result: CampaignResult) -> Table:
    shown = Table(title=f"killpoint campaign — {result.engine}, {result.tier}")
    for column in ("scenario", "boundaries", "crashed", "runs", "violations"):
        shown.add_column(column, justify="left" if column == "scenario" else "right")
    for cov in result.scenarios:
        shown.add_row(
            cov.scenario,
            str(len(cov.boundaries_discovered)),
            str(len(cov.boundaries_crashed)),
            str(cov.runs),
            Text(str(cov.violations), style="red" if cov.violations else ""),
        )
    return shown


def _figures(result: CampaignResult) -> list[str]:
    from killpoint.reports import campaign_metrics

    m = campaign_metrics(result)
    figures = [
        f"resume success {_pct(m.resume_success.value)}",
        f"duplicate effects {_pct(m.duplicate_effects.value)}",
        f"needs review {_pct(m.needs_review.value)}",
        f"within budget {_pct(m.within_budget.value)}",
        f"recovery p50 {_num(m.recovery_time.steps.p50)} steps",
        f"boundaries crashed {m.coverage.crashed}/{m.coverage.discovered}",
        _objectives(m.objectives),
    ]
    if m.mutation_score is not None:
        explored = sum(mu.found_by == "exploration" for mu in result.mutants)
        figures.append(
            f"mutants caught {m.mutation_score.count}/{m.mutation_score.of}"
            + (f" ({explored} first by exploration)" if explored else "")
        )
    return figures


def _objectives(summary: ObjectivesSummary) -> str:
    from killpoint.reports.objectives_view import console_figure

    return console_figure(summary)


def _deploys(result: CampaignResult) -> str | None:
    from killpoint.reports.deploys import deploy_rows, deploy_summary

    return deploy_summary(deploy_rows(result))


def _pct(value: float | None) -> str:
    from killpoint.reports import percent  # the report's rounding: console and page agree

    return percent(value)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:g}"
