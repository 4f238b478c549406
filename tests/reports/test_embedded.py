"""The archive a report carries: every schedule it names, unpacked by `tar` as the page says,
the same bytes from the same runs."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

from killpoint.harness.results import CampaignResult
from killpoint.harness.schedule import load_schedule
from killpoint.reports.embedded import ARCHIVE, archive, file_name


def test_the_archive_unpacks_with_tar_to_each_runs_schedule(
    campaign: CampaignResult, tmp_path: Path
) -> None:
    runs = campaign.runs[:5]
    carried = archive(runs)
    assert carried is not None and carried.file_name == ARCHIVE and carried.files == len(runs)
    prefix, _, encoded = carried.href.partition(",")
    assert prefix == "data:application/gzip;base64"
    (tmp_path / ARCHIVE).write_bytes(base64.b64decode(encoded))
    subprocess.run(["tar", "xzf", ARCHIVE], cwd=tmp_path, check=True)
    for run in runs:
        assert load_schedule(tmp_path / file_name(run)) == run.schedule


def test_the_same_runs_make_the_same_archive_and_none_make_none(campaign: CampaignResult) -> None:
    first, again = archive(campaign.runs), archive(list(reversed(campaign.runs)))
    assert first is not None and again is not None and first.href == again.href
    assert archive([]) is None
