"""Checks before work: a command that will fail at its end fails at its start instead.

A campaign can run for minutes; an output path it cannot write, or a database URL it cannot
open, would lose everything it computed. So every path a command will write and every URL it
will open is checked first, and a command that fails its checks creates nothing: a path is
tried by making a temporary file in its nearest existing folder, removed at once.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from killpoint.contract.errors import KillpointError
from killpoint.harness.run.databases import parse


def writable(path: Path, flag: str, *, folder: bool = False) -> None:
    """`path` (a file, or with `folder` a folder) can be made and written later."""
    path = Path(os.path.abspath(path))
    if path.exists() and path.is_dir() != folder:
        kind = "a folder" if path.is_dir() else "a file"
        raise KillpointError(f"{flag} {path}: is {kind}")
    existing = path if folder and path.exists() else path.parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise KillpointError(f"{flag} {path}: {existing} is a file, not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".killpoint-check-"):
            pass
    except OSError as exc:
        raise KillpointError(f"{flag} {path}: cannot write in {existing}: {exc.strerror}") from None


def database(url: str | None, flag: str = "--db") -> None:
    """A URL killpoint can give an engine; a SQLite file it can write."""
    if url is None:
        return
    parsed = parse(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        writable(Path(parsed.database), flag)


def outputs(paths: Mapping[str, Path | None], workdir: Path | None = None) -> None:
    """Every output a command was asked for, and the folder its work goes in."""
    if workdir is not None:
        writable(workdir, "--workdir", folder=True)
    for flag, path in paths.items():
        if path is not None:
            writable(path, flag)
