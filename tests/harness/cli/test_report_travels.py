"""A report travels: copied away from the machine and the campaign that wrote it (a CI artifact
downloaded elsewhere, a campaign folder pruned by later campaigns), the command it prints
replays its violation from the schedule it carries."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from killpoint.harness.results import load_result
from killpoint.harness.schedule import FaultSchedule
from killpoint.reports.embedded import file_name
from tests.support.carried import carried_files, save_carried
from tests.support.dom import Census
from tests.support.small_runs import CAUGHT, PASSING, cli


def _replays_its_first_violation(
    report: Path, result: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In `folder`, holding nothing but what the page carries, as the page says: the first
    command it prints reproduces that run's violation with the same checker."""
    commands = save_carried(report.read_text(), folder)
    monkeypatch.chdir(folder)
    assert commands, "the page prints no replay command"
    by_file = {file_name(r): r for r in load_result(result).violations}
    command = commands[0]
    [saved] = [word for word in command if word.endswith(".json")]
    checkers = {v.checker for v in by_file[saved].verdicts if v.valid is False}
    code, out, _ = cli(*command)
    assert code == 1, out
    assert {c for c in checkers if re.search(rf"{c} +VIOLATION", out)} == checkers


def test_a_report_copied_to_another_folder_replays_from_the_command_it_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ci = tmp_path / "ci"
    ci.mkdir()
    monkeypatch.chdir(ci)
    code, out, _ = cli(*CAUGHT, "--report", "out/report.html", "--out", "out/result.json")
    assert code == 1, out
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    report = Path(shutil.copy(ci / "out" / "report.html", laptop / "report.html"))
    result = Path(shutil.copy(ci / "out" / "result.json", tmp_path / "result.json"))
    shutil.rmtree(ci)  # the machine that ran it is gone: the page alone must do

    _replays_its_first_violation(report, result, laptop, monkeypatch)
    carried = {
        name: FaultSchedule.model_validate_json(b)
        for name, b in carried_files(report.read_text()).items()
    }
    for run in load_result(result).violations:  # every one, each the schedule that ran
        assert carried[file_name(run)] == run.schedule


def test_pruning_the_campaign_folder_leaves_a_report_named_by_path_replayable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first campaign's folder is pruned by the five after it (`--keep-campaigns 5`), as
    it should be; its report, outside the workdir, links into nothing the pruning removed."""
    monkeypatch.chdir(tmp_path)
    work = ["--workdir", "work", "--keep-campaigns", "5"]
    code, out, _ = cli(*CAUGHT, *work, "--report", "reports/first.html", "--out", "first.json")
    assert code == 1, out
    [first] = (tmp_path / "work").glob("campaign-*")
    for _ in range(5):
        code, out, _ = cli(*PASSING, *work)
        assert code == 0, out
    assert not first.exists() and len(list((tmp_path / "work").glob("campaign-*"))) == 5

    report = tmp_path / "reports" / "first.html"
    links = [e.attrs["href"] for e in Census(report.read_text()).elements if "href" in e.attrs]
    assert links and all(h.startswith(("#", "data:")) for h in links)  # nothing outside it
    _replays_its_first_violation(report, tmp_path / "first.json", tmp_path / "saved", monkeypatch)
