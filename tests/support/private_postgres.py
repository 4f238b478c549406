"""A PostgreSQL server of the test's own, to restart under a running campaign: the machine's
shared server must never be restarted (other tests use it at the same time)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.needs import missing

BIN_ROOT = Path("/usr/lib/postgresql")


def _bin() -> Path | None:
    found = sorted(BIN_ROOT.glob("*/bin/pg_ctl")) if BIN_ROOT.is_dir() else []
    return found[-1].parent if found else None


def _as_postgres() -> list[str]:
    """Root may not run a PostgreSQL server: run its tools as the `postgres` user."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    if runuser is None:
        missing("running as root without runuser: cannot start a private PostgreSQL")
    return [runuser, "-u", "postgres", "--"]


class PrivatePostgres:
    def __init__(self, root: Path) -> None:
        bin_dir = _bin()
        if bin_dir is None:
            missing(f"no PostgreSQL server binaries under {BIN_ROOT}")
        self.bin, self.data, self.prefix = bin_dir, root / "data", _as_postgres()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        root.chmod(0o777)
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres")
        self.options = f"-p {self.port} -k {root} -c listen_addresses=127.0.0.1"
        self.log = root / "server.log"

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.prefix, str(self.bin / tool), *args], check=True, capture_output=True)

    def ctl(self, action: str) -> None:
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            self.options,
            "-l",
            str(self.log),
            "-w",
            "-m",
            "fast",
            action,
        )


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """Its folder is outside pytest's (private to root): the `postgres` user must reach it."""
    root = Path(tempfile.mkdtemp(prefix="killpoint-pg-"))
    try:
        server = PrivatePostgres(root)
        server.ctl("start")
        try:
            yield server
        finally:
            server.ctl("stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
