"""The schedules a report carries inside itself, so the page replays wherever it is opened.

A report travels (a CI artifact downloaded to a laptop, a file mailed to a colleague) while the
campaign's folder stays behind on the machine that ran it, and is pruned there by later
campaigns (`killpoint clean`, `--keep-campaigns`). So every run the page shows with a replay
command carries its schedule in the page: the JSON to read, a download link that saves it under
its file name, and the command `killpoint replay NAME.json`, relative, run in the folder the
file was saved in. Schedules are small (a few hundred bytes to a few kilobytes), and one file
cannot lose its schedules on the way, as a folder beside it could.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
from dataclasses import dataclass

from killpoint.harness.results import RunResult


@dataclass(frozen=True)
class CarriedSchedule:
    file_name: str  # what the download is saved as: the campaign's own name for the file
    json: str  # indented, to read on the page
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


def carried(run: RunResult, name_engine: bool = False) -> CarriedSchedule:
    """What the page carries of `run` to replay it: its schedule, to read and to save."""
    # what differs from the defaults only (and the engine, named or not): a schedule loads back
    # the same, in half the bytes
    shown = {"engine": None} | run.schedule.model_dump(mode="json", exclude_defaults=True)
    compact = json.dumps(shown, separators=(",", ":")).encode()
    return CarriedSchedule(
        file_name=file_name(run),
        json=json.dumps(shown, indent=2),
        href="data:application/json;base64," + base64.b64encode(compact).decode(),
        replay=replay_for(run, name_engine),
        engine=run.schedule.engine,
    )
