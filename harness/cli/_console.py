"""A console fit for CI logs: data printed as written, lines never broken by the printer.

What the summaries print is data — evidence, business keys in brackets, paths, commands — so
rich reads none of it as markup. A line is never broken by rich (a terminal wraps it on
screen, a CI log keeps it whole), so a path or a `killpoint replay` command can be copied from
the log. A table is drawn to the console's width on a terminal, and at its own width off one:
rich takes a pipe for 80 columns, which would fold every cell of a wide table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from killpoint.harness.results import MutantResult

UNBOUNDED = 10_000  # columns: a table measured off a terminal takes what it needs
SCHEDULE_WIDTH = 60  # columns: a long minimal schedule folds rather than widen its table


def ci_console(*, stderr: bool = False) -> Console:
    return Console(stderr=stderr, markup=False, highlight=False, emoji=False)


def line(console: Console, *parts: str | tuple[str, str]) -> None:
    """One line, whole: `parts` are plain text, or (text, style)."""
    console.print(Text.assemble(*parts), soft_wrap=True)


def table(console: Console, shown: Any) -> None:
    """A table (or any renderable): squeezed to a terminal, at its own width off one."""
    if console.is_terminal:
        console.print(shown)
        return
    narrow = console.width
    unbounded = console.options.update_width(UNBOUNDED)
    console.width = max(narrow, Measurement.get(console, unbounded, shown).maximum)
    try:
        console.print(shown)
    finally:
        console.width = narrow


def mutant_table(results: Sequence[MutantResult], title: str) -> Table:
    """One row per engine hunted: caught or escaped, the first checker that objected, the runs
    and seconds that took, what found it and the minimal schedule."""
    shown = Table(title=title)
    for column in ("mutant", "caught", "checker", "runs", "seconds", "found by"):
        shown.add_column(column, justify="right" if column in ("runs", "seconds") else "left")
    shown.add_column("minimal schedule", overflow="fold", max_width=SCHEDULE_WIDTH)
    for r in results:
        shown.add_row(
            r.mutant,
            Text("yes") if r.caught else Text("ESCAPED", style="bold red"),
            r.checker or "—",
            str(r.runs_to_detection or "—"),
            "—" if r.seconds_to_detection is None else f"{r.seconds_to_detection:.1f}",
            r.found_by or "—",
            f"{r.schedule.scenario}: {r.schedule.describe()}" if r.schedule else "—",
        )
    return shown
