"""`merge --summary-md`: the Markdown a CI job shows as its summary page."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.cli._markdown import summary_markdown
from killpoint.harness.findings import phase_counts
from killpoint.harness.results import Verdict
from tests.support.campaigns import sample_campaign


def _rows(markdown: str, header: str) -> list[list[str]]:
    """The body rows of the table whose header starts with `header`, cell by cell (a `\\|`
    inside a cell is not a cell's end)."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header)) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.replace("\\|", "\0").strip("|").split("|")])
    return rows


def test_a_violating_campaign_says_fail_and_replays_its_smallest_counterexample() -> None:
    campaign = sample_campaign()
    markdown = summary_markdown(campaign)
    assert markdown.startswith("### killpoint: FAIL — 1 violating of 8 runs\n")
    (row,) = _rows(markdown, "| checker")
    (violating,) = campaign.violations
    assert row[0] == "`single_effect`"
    assert row[-1] == f"`killpoint replay {violating.schedule_file}`"
    assert "unknown runs (neither proved safe nor violating): 1" in markdown


def test_the_phase_table_counts_what_findings_counts() -> None:
    campaign = sample_campaign()
    rows = _rows(summary_markdown(campaign), "| phase")
    assert rows == [
        [p.phase, str(p.runs), str(p.violating), str(p.unknown)] for p in phase_counts(campaign)
    ]


def test_a_campaign_without_violations_says_pass_and_lists_no_counterexample() -> None:
    campaign = sample_campaign()
    clean = campaign.model_copy(update={"runs": [r for r in campaign.runs if r.valid is not False]})
    markdown = summary_markdown(clean)
    assert markdown.startswith("### killpoint: PASS — 0 violating of 7 runs\n")
    assert "| checker" not in markdown


def test_a_pipe_or_newline_in_a_verdict_stays_inside_its_cell() -> None:
    campaign = sample_campaign()
    (violating,) = campaign.violations
    odd = Verdict(checker="single_effect", valid=False, summary="a | b\nc `d`")
    run = violating.model_copy(update={"verdicts": [odd]})
    markdown = summary_markdown(campaign.model_copy(update={"runs": [run]}))
    (row,) = _rows(markdown, "| checker")
    assert len(row) == 5
    assert row[3] == "`order_saga r7: a \0 b c 'd'`"


def test_merge_writes_the_summary_and_still_exits_1_on_a_violation(tmp_path: Path) -> None:
    shard = tmp_path / "result-1.json"
    shard.write_text(sample_campaign().model_copy(update={"shard": None}).model_dump_json())
    summary = tmp_path / "summary.md"
    done = CliRunner().invoke(app, ["merge", str(shard), "--summary-md", str(summary)])
    assert done.exit_code == 1
    assert f"summary: {summary}" in done.stdout
    assert summary.read_text().startswith("### killpoint: FAIL")


def test_an_unwritable_summary_path_is_refused_before_merging(tmp_path: Path) -> None:
    shard = tmp_path / "result-1.json"
    shard.write_text(sample_campaign().model_copy(update={"shard": None}).model_dump_json())
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    done = CliRunner().invoke(app, ["merge", str(shard), "--summary-md", str(blocked / "s.md")])
    assert done.exit_code == 2
    assert "--summary-md" in done.stderr and "Traceback" not in done.stderr + done.stdout
