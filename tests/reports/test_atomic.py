"""Reports are replaced in one step: never a half-written file, never a stray temp file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from killpoint.harness.results import CampaignResult
from killpoint.reports import html, write_atomic
from killpoint.reports.html import write_html
from killpoint.reports.junit import write_junit


def test_writing_leaves_only_the_report_in_the_folder(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    write_html(campaign, tmp_path / "out" / "report.html")
    write_junit(campaign, tmp_path / "out" / "junit.xml")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["junit.xml", "report.html"]


def test_a_failed_render_leaves_the_previous_report_intact(
    campaign: CampaignResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_html(campaign, tmp_path / "report.html")
    before = path.read_bytes()

    def broken(result: object, where: object = None) -> object:
        raise RuntimeError("template exploded")

    monkeypatch.setattr(html, "build_page", broken)
    with pytest.raises(RuntimeError, match="template exploded"):
        write_html(campaign, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_a_failed_replace_removes_the_temp_file_and_keeps_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("old")

    def no_replace(src: str, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["junit.xml"]


def test_the_temp_file_is_written_in_the_target_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def spy(src: str, dst: object) -> None:
        seen.append(src)
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", spy)
    write_atomic(tmp_path / "r.html", "x")
    assert Path(seen[0]).parent == tmp_path


def test_a_new_report_is_readable_by_others_and_a_replaced_one_keeps_its_mode(
    tmp_path: Path,
) -> None:
    fresh = write_atomic(tmp_path / "report.html", "x")
    assert fresh.stat().st_mode & 0o777 == 0o644
    kept = tmp_path / "junit.xml"
    kept.write_text("old")
    kept.chmod(0o600)
    write_atomic(kept, "new")
    assert kept.stat().st_mode & 0o777 == 0o600
