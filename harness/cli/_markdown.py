"""A campaign's summary in Markdown, for the page a CI job shows (`merge --summary-md PATH`).

A CI job's summary (GitHub's `$GITHUB_STEP_SUMMARY`, a merge request's note) is read by someone
who has not opened the report yet: the verdict and its reason first, the runs per phase, then
the smallest counterexample of each (checker, fault class) group with the command that replays
it. The order and the groups are `findings`', so the page agrees with the console and the report.
"""

from __future__ import annotations

from killpoint.harness.cli._summary import replay_command
from killpoint.harness.findings import phase_counts, violation_groups
from killpoint.harness.results import CampaignResult

SHOWN_GROUPS = 20


def summary_markdown(result: CampaignResult) -> str:
    """The verdict line, the phase table and the smallest counterexample of each group."""
    violating = result.violations
    unknown = sum(run.valid == "unknown" for run in result.runs)
    verdict = "FAIL" if violating else "PASS"
    lines = [
        f"### killpoint: {verdict} — {len(violating)} violating of {len(result.runs)} runs",
        "",
        f"Engine `{result.engine}`, tier {result.tier}, store {_cell(result.backend)}; "
        f"scenarios: {len(result.scenarios)}, wall time {result.duration_s:.1f}s"
        + (f"; unknown runs (neither proved safe nor violating): {unknown}" if unknown else "")
        + ".",
        "",
        "| phase | runs | violating | unknown |",
        "|---|---:|---:|---:|",
        *(f"| {p.phase} | {p.runs} | {p.violating} | {p.unknown} |" for p in phase_counts(result)),
    ]
    groups = violation_groups(violating)
    if groups:
        lines += [
            "",
            "Smallest counterexample of each (checker, fault class), smallest first:",
            "",
            "| checker | fault | runs | smallest run | replay |",
            "|---|---|---:|---|---|",
        ]
        for group in groups[:SHOWN_GROUPS]:
            run = group.smallest
            reason = next((v.summary for v in run.verdicts if v.valid is False), run.label)
            replay = replay_command(run.schedule_file) if run.schedule_file else "no schedule kept"
            lines.append(
                f"| {_cell(group.checker)} | {_cell(group.fault)} | {len(group.runs)} "
                f"| {_cell(f'{run.scenario} {run.run_id}: {reason}')} | {_cell(replay)} |"
            )
        if len(groups) > SHOWN_GROUPS:
            lines.append(f"\n… and {len(groups) - SHOWN_GROUPS} more groups: see the report.")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """`text` as code in one table cell: a `|` would end the cell, a newline the row."""
    flat = " ".join(text.split()).replace("|", "\\|").replace("`", "'")
    return f"`{flat}`"
