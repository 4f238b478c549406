"""`--trend FILE`: a build's figures appended to a history the user keeps (`reports.trends`),
checked before the campaign runs so a bad history fails at the start, not after the work."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from killpoint.harness.campaign import preflight

TrendOption = Annotated[
    Path | None,
    typer.Option(
        "--trend",
        metavar="FILE",
        help="Append this build's figures to a history file (JSON lines, one a build; created "
        "if missing) and draw its last builds in the report.",
        show_default=False,
    ),
]


def check_trend(trend: Path | None) -> None:
    """The history can be appended to and holds only records (one error naming a bad line)."""
    if trend is None:
        return
    from killpoint.reports.trends import read_trend

    preflight.writable(trend, "--trend")
    read_trend(trend)
