"""Looking for the world's secrets after each run: in the engine's store, its work folder, every
file the run wrote and the run's history (`killpoint.harness.canaries` says in which forms).

The store is read as the engine left it on disk: a SQLite file byte for byte with its WAL and
rollback journal (free pages and old frames included, where a deleted row still lies), or on
PostgreSQL every row of every table of the world's schema, each value as text and as its bytes
(the server's files are not ours to read). Every file under the world's folder is read too:
artifacts, an engine's own files, a worker's files of the real tier.

A scan is cheap because a world's files change little between runs: a file whose size and time
did not change is not read; a SQLite WAL is read from where the previous scan stopped (the
frames a run added: 300 KB of a 4 MB log); any other file is compared with what the previous
scan read and searched only in the stretch that changed. So each run is
judged by what it wrote; a file no run changed since it was scanned is not searched again.
"""

from __future__ import annotations

import functools
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.exc import SQLAlchemyError

from killpoint.contract.secrets import CHECKPOINT_KEY_ENV, Secrets
from killpoint.harness.canaries import CanaryFinding, CanaryScan, Needles
from killpoint.harness.history import History
from killpoint.harness.protocol import StoreHandle
from killpoint.harness.run.sqlite_wal import WalMark, read_new_frames

SQLITE_FILES = ("", "-wal", "-journal")  # the database and the files that hold its pages too


def world_secrets() -> Secrets:
    """The secrets a new world hands its workers, exported for the processes they run in.

    The service token is fresh for each world. The sealing key is the one this process already
    seals with when there is one (a key the user exported, so `inspect` and `queue` read the
    campaign's stores afterwards; or an earlier world's), else a fresh one: a store outlives
    its world, and one process's checkpoints must open with one key."""
    key = os.environ.get(CHECKPOINT_KEY_ENV) or secrets.token_hex(32)
    token = "kp-token-" + secrets.token_hex(24)
    made = Secrets(checkpoint_key=key, service_token=token)
    os.environ.update(made.environ())
    return made


@functools.lru_cache(maxsize=64)
def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL; None for any other database (or an in-memory one)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


@dataclass
class _Seen:
    stamp: tuple[int, int, int]  # size, mtime, inode: unchanged means not written since
    data: bytes


class FileScan:
    """Files searched for canaries, each only where it changed since its last scan (a SQLite
    WAL: only the frames added since, `harness.run.sqlite_wal`). A scan visits files between
    `begin` and `end`; what it no longer finds is forgotten. Paths are plain strings: a scan
    runs after every run, and building `Path` objects was a third of its time."""

    def __init__(self, needles: Needles) -> None:
        self.needles = needles
        self._seen: dict[str, _Seen] = {}
        self._marks: dict[str, WalMark] = {}
        self._visited: set[str] = set()

    def begin(self) -> None:
        self._visited = set()

    def end(self) -> None:
        for path in set(self._seen) - self._visited:
            del self._seen[path]
            self._marks.pop(path, None)

    def file(self, path: str, where: str, st: os.stat_result | None = None) -> list[CanaryFinding]:
        """The canaries in what `path` gained since its last scan (`st`: its stat, if known)."""
        self._visited.add(path)
        try:
            st = st or os.stat(path)
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
            last = self._seen.get(path)
            if last is not None and last.stamp == stamp:
                return []
            if path.endswith("-wal") and (found := self._wal(path, where)) is not None:
                self._seen[path] = _Seen(stamp, b"")
                return found
            with open(path, "rb") as f:
                data = f.read()
        except OSError:  # gone between the listing and the read: nothing left to find
            self._seen.pop(path, None)
            return []
        self._seen[path] = _Seen(stamp, data)
        spans = _changed(last.data if last else b"", data, self.needles.longest)
        return self.needles.find(data, where, spans) if spans else []

    def _wal(self, path: str, where: str) -> list[CanaryFinding] | None:
        read = read_new_frames(path, self._marks.get(path))
        if read is None:
            return None
        frames, self._marks[path] = read
        return self.needles.find(frames, where)


def files_under(folder: str) -> list[tuple[str, os.stat_result]]:
    """Every regular file under `folder` with its stat, in path order (one stat a file)."""
    found: list[tuple[str, os.stat_result]] = []
    folders = [folder]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:  # gone, or not a folder
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                found.append((entry.path, entry.stat(follow_symlinks=False)))
    return sorted(found, key=lambda pair: pair[0])


def _changed(old: bytes, new: bytes, margin: int) -> list[tuple[int, int]]:
    """The span of `new` between what it shares with `old` at its start and at its end, widened
    by `margin` so a needle across either edge is found; none if nothing changed. A WAL is
    written in one stretch, so the span is what the run wrote; a file changed in scattered
    places is searched from its first change to its last."""
    if old == new:
        return []
    same = memoryview(old)
    lo, hi = 0, min(len(old), len(new))
    while lo < hi:  # the longest common prefix, by halves (each a memcmp)
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if new.startswith(same[lo:mid], lo) else (lo, mid - 1)
    start = lo
    lo, hi = 0, min(len(old), len(new)) - start
    while lo < hi:  # the longest common suffix after it
        mid = (lo + hi + 1) // 2
        tail = same[len(old) - mid : len(old) - lo]
        lo, hi = (mid, hi) if new.endswith(tail, 0, len(new) - lo) else (lo, mid - 1)
    return [(max(0, start - margin), min(len(new), len(new) - lo + margin))]


# the tables of the URL's schema, each with its bytea columns
TABLES = text(
    "SELECT c.relname, coalesce(array_agg(a.attname::text) FILTER "
    "(WHERE a.atttypid = 'bytea'::regtype), '{}') FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
    "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') GROUP BY c.relname"
)


def table_rows(engine: Engine) -> list[tuple[str, list[bytes]]]:
    """Each table of the URL's schema with its rows as PostgreSQL prints them (text; bytea as
    hex) and each bytea value with its printable bytes as they are (`encode(…, 'escape')`), so
    a secret is seen as text, as the hex of its bytes and inside bytes. Two round trips."""
    with engine.connect() as conn:
        tables = [(str(name), list(binary)) for name, binary in conn.execute(TABLES)]
        if not tables:
            return []
        parts = []
        for i, (table, binary) in enumerate(tables):
            parts.append(f'SELECT {i} AS t, x::text AS v FROM "{table}" x')
            parts += [f'SELECT {i}, encode("{col}", \'escape\') FROM "{table}"' for col in binary]
        rows = conn.execute(text(" UNION ALL ".join(parts))).all()
    found: list[list[bytes]] = [[] for _ in tables]
    for index, value in rows:
        if value is not None:
            found[index].append(value.encode())
    return [(table, values) for (table, _), values in zip(tables, found, strict=True)]


@dataclass
class Canaries:
    """A world's secrets, and its scans of each run for them; `on` is the off switch
    (`--no-canaries`)."""

    secrets: Secrets = field(default_factory=world_secrets)
    on: bool = True
    _files: FileScan | None = field(default=None, repr=False)
    _engines: dict[str, Engine] = field(default_factory=dict, repr=False)

    @property
    def files(self) -> FileScan:
        if self._files is None:
            self._files = FileScan(Needles(self.secrets.named()))
        return self._files

    def scanned(self, store: StoreHandle, root: Path, history: History) -> History:
        """`history` with what a scan of the run found (as it is when scans are off): the
        history itself, the store, every file under the world's folder `root` and the
        store's work folder."""
        if not self.on:
            return history
        files, unscanned = self.files, list[str]()
        findings = files.needles.find(history.model_dump_json().encode(), "history")
        files.begin()
        findings += self._store(store, unscanned)  # first: its files are named as the store's
        findings += self._folder(root, "")
        if store.workdir != root and store.workdir.resolve() != root.resolve():
            findings += self._folder(store.workdir, "work folder ")
        files.end()
        names = files.needles.names
        scan = CanaryScan(canaries=names, findings=findings, unscanned=unscanned)
        return history.model_copy(update={"canaries": scan})

    def _store(self, store: StoreHandle, unscanned: list[str]) -> list[CanaryFinding]:
        path = sqlite_path(store.url)
        if path is not None:
            found = []
            for suffix in SQLITE_FILES:
                part = f"{path}{suffix}"
                try:
                    st = os.stat(part)
                except OSError:
                    continue
                found += self.files.file(part, f"store file {path.name}{suffix}", st)
            return found
        if make_url(store.url).get_backend_name() == "postgresql":
            return self._rows(store.url, unscanned)
        unscanned.append(f"the store {store.label} is neither a SQLite file nor PostgreSQL")
        return []

    def _rows(self, url: str, unscanned: list[str]) -> list[CanaryFinding]:
        engine = self._engines.get(url)
        if engine is None:  # one connection kept for the store: a connect per run costs more
            self.close()  # a store of an earlier run (an engine without a reset hook)
            engine = self._engines[url] = create_engine(url, pool_size=1, max_overflow=0)
        try:
            tables = table_rows(engine)
        except SQLAlchemyError as exc:
            unscanned.append(f"the store's rows: {str(exc).splitlines()[0]}")
            return []
        needles = self.files.needles
        return [f for t, v in tables for f in needles.find(b"\0".join(v), f"store rows {t}")]

    def close(self) -> None:
        """Close the connections the row scans kept (with the world)."""
        engines, self._engines = self._engines, {}
        for engine in engines.values():
            engine.dispose()

    def _folder(self, folder: Path, prefix: str) -> list[CanaryFinding]:
        """Every file under `folder` (a file already scanned as the store's is unchanged)."""
        top = str(folder)
        cut = len(top) + 1
        return [
            finding
            for path, st in files_under(top)
            for finding in self.files.file(path, f"{prefix}{path[cut:]}", st)
        ]


__all__ = ["Canaries", "FileScan", "files_under", "sqlite_path", "table_rows", "world_secrets"]
