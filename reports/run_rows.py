"""The per-run table's rows: every run of the campaign, as compact JSON the page's script draws
and filters without a server, and the runs counted per (scenario, kind).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from killpoint.harness.findings import first_objection
from killpoint.harness.results import CampaignResult

ROW_FIELDS = (
    "run",
    "scenario",
    "phase",
    "verdict",
    "checker",
    "status",
    "workers",
    "deaths",
    "seconds",
)


def run_rows(result: CampaignResult) -> str:
    """Every run as a row of the per-run table, as compact JSON the page's script draws, one
    column per field (`ROW_FIELDS`): `{"fields": …, "values": {field: [names]}, "columns":
    {field: …}}`. A name repeated in every row is given once and referred to by its place; a
    column of small numbers (places, workers, deaths: all under 36) is a string of base-36
    digits, one a run; seconds are in hundredths. A campaign of 5,000 runs makes some 130 KB
    of it; as table markup, some 900 KB."""
    names: dict[str, dict[str, int]] = {f: {} for f in ROW_FIELDS[1:6]}

    def ref(field: str, value: str) -> int:
        return names[field].setdefault(value, len(names[field]))

    columns: dict[str, list[Any]] = {f: [] for f in ROW_FIELDS}
    for r in result.runs:
        verdict = "valid" if r.valid is True else "violation" if r.valid is False else "unknown"
        wall = r.measures.wall_s
        for field_name, value in zip(
            ROW_FIELDS,
            (
                r.run_id,
                ref("scenario", r.scenario),
                ref("phase", r.kind),
                ref("verdict", verdict),
                ref("checker", first_objection(r) if r.valid is not True else ""),
                ref("status", r.final_status),
                r.measures.workers,
                r.measures.deaths,
                None if wall is None else round(wall * 100),
            ),
            strict=True,
        ):
            columns[field_name].append(value)
    packed = {f: _digits(column) if f in SMALL else column for f, column in columns.items()}
    values = {field: list(seen) for field, seen in names.items()}
    data = {"fields": ROW_FIELDS, "values": values, "columns": packed}
    # safe inside <script>: no "</" can close it early
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


SMALL = frozenset(ROW_FIELDS[1:8])  # the columns of places and counts


def _digits(column: list[int]) -> str | list[int]:
    """`[0, 2, 11]` as `"02b"`, one base-36 digit a run; the list itself when one is 36 or
    more."""
    if any(not 0 <= n < 36 for n in column):
        return column
    return "".join("0123456789abcdefghijklmnopqrstuvwxyz"[n] for n in column)


def run_table(result: CampaignResult) -> list[dict[str, Any]]:
    """Runs aggregated per (scenario, kind): how many, and how they ended."""
    table: dict[tuple[str, str], Counter[str]] = {}
    for run in result.runs:
        counts = table.setdefault((run.scenario, run.kind), Counter())
        counts["runs"] += 1
        counts["valid" if run.valid is True else str(run.valid).lower()] += 1
        counts["needs_review"] += run.final_status == "needs_review"
    return [{"scenario": s, "kind": k, **c} for (s, k), c in table.items()]
