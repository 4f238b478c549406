"""The schedules a report carries inside itself, so the page replays wherever it is opened.

A report travels (a CI artifact downloaded to a laptop, a file mailed to a colleague) while the
campaign's folder stays behind on the machine that ran it, and is pruned there by later
campaigns (`killpoint clean`, `--keep-campaigns`). So every run the page names carries its
schedule in the page: the smallest counterexample in a link that saves it under its file name,
every run the page names in one gzipped tar (`archive`: a group's runs differ in a few fields and
compress to a few bytes each), each with the command `killpoint replay NAME.json`, run in the
folder the file was saved or unpacked in. One file cannot lose its schedules on the way, as a
folder beside it could.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import shlex
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass

from killpoint.harness.results import RunResult


@dataclass(frozen=True)
class CarriedSchedule:
    file_name: str  # what the download is saved as: the campaign's own name for the file
    href: str  # a data: URL of the same schedule, for the download link
    replay: str | None  # `killpoint replay NAME.json`; None when the schedule names no engine
    engine: str | None  # the engine the schedule names


def file_name(run: RunResult) -> str:
    """`order_saga-single-8.json`, as the campaign names it (a run id alone repeats across
    scenarios); anything a shell or a file system would mind becomes `-`."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", f"{run.scenario}-{run.run_id}") + ".json"


def replay_for(run: RunResult, name_engine: bool = False, path: str | None = None) -> str | None:
    """`killpoint replay NAME.json`, complete by itself in the folder the schedule was saved in
    (or `path`, where the campaign saved it: for the JUnit file, read beside the campaign): the
    schedule names its engine and tier (`name_engine` still says `--engine mutant:NAME`, where
    the engine is the point: a caught mutant). None when the engine was handed to the harness
    as an object: the schedule names none and only the test that built it can."""
    engine = run.schedule.engine
    if engine is None:
        return None
    command = f"killpoint replay {shlex.quote(path or file_name(run))}"
    return f"{command} --engine {shlex.quote(engine)}" if name_engine else command


def _compact(run: RunResult) -> bytes:
    # what differs from the defaults only (and the engine, named or not): a schedule loads back
    # the same, in half the bytes
    shown = {"engine": None} | run.schedule.model_dump(mode="json", exclude_defaults=True)
    return json.dumps(shown, separators=(",", ":")).encode()


def carried(run: RunResult, name_engine: bool = False) -> CarriedSchedule:
    """What the page carries of `run` to replay it: its schedule, to save."""
    return CarriedSchedule(
        file_name=file_name(run),
        href="data:application/json;base64," + base64.b64encode(_compact(run)).decode(),
        replay=replay_for(run, name_engine),
        engine=run.schedule.engine,
    )


ARCHIVE = "killpoint-schedules.tar.gz"


@dataclass(frozen=True)
class CarriedArchive:
    """The schedules of the runs a page lists in a line, in one gzipped tar: a group's runs
    differ in a few fields, so together they compress to a few bytes each where one link apiece
    would cost hundreds."""

    file_name: str
    href: str  # a data: URL of the archive, for the download link
    files: int


def archive(runs: Sequence[RunResult]) -> CarriedArchive | None:
    """The schedules of `runs`, each under its `file_name`, in a `.tar.gz` made the same byte
    for byte from the same runs (no times, owners or modes of this machine); None for none."""
    if not runs:
        return None
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, run in sorted({file_name(run): run for run in runs}.items()):
            content = _compact(run)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(content), 0o644
            tar.addfile(info, io.BytesIO(content))
    zipped = gzip.compress(packed.getvalue(), compresslevel=9, mtime=0)
    return CarriedArchive(
        file_name=ARCHIVE,
        href="data:application/gzip;base64," + base64.b64encode(zipped).decode(),
        files=len({file_name(run) for run in runs}),
    )
