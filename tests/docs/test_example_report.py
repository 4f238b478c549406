"""The one committed report, `docs/example-report/report.html`, is what the command its page
states builds: the page's own command is run again here and the two reports are compared by
what does not depend on the clock (the title, the summary's tiles, the sections). Reports are
built, not committed; this small one is kept so a reader sees one without running anything."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.support.blocks import ROOT

PAGE = ROOT / "docs" / "frameworks.md"
REPORT = "docs/example-report/report.html"
MAX_BYTES = 400_000
TILE = re.compile(
    r'id="(tile-[\w-]+)".*?class="tile-value">([^<]*)<.*?class="tile-detail">([^<]*)<', re.S
)


def _documented_command() -> list[str]:
    """The command the page states (inline, maybe wrapped over lines), as words."""
    found = re.search(
        r"`(killpoint run [^`]*--report " + re.escape(REPORT) + ")`", PAGE.read_text()
    )
    assert found is not None, f"{PAGE.name} states no command that builds {REPORT}"
    return shlex.split(found[1])


def _headline(html: str) -> dict[str, object]:
    return {
        "title": re.findall(r"<title>(killpoint[^<]*)</title>", html),
        "tiles": TILE.findall(html),
        "sections": re.findall(r"<h2>([^<]*)</h2>", html),
    }


def test_the_example_report_is_committed_small() -> None:
    report = ROOT / REPORT
    assert report.is_file() and report.stat().st_size < MAX_BYTES
    assert _headline(report.read_text())["title"] == ["killpoint report — reference · PASS"]


def test_the_documented_command_builds_the_committed_report(tmp_path: Path) -> None:
    """Run from a folder holding `docs/example-report/`, as from the repository's root, so the
    report's relative paths are the committed one's."""
    (tmp_path / "docs" / "example-report").mkdir(parents=True)
    main = "from killpoint.harness.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", main, *_documented_command()[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2_000:]
    fresh, committed = ((root / REPORT).read_text() for root in (tmp_path, ROOT))
    assert _headline(fresh) == _headline(committed)
    assert _headline(fresh)["tiles"] != []
