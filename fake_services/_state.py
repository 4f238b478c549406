"""Durable state of the fake services (charges, posts, messages, publications, files, blobs).

It shares the journal's database so a state change and its journal effect commit together, and a
real-tier server restarted on the same file still answers lookups (by idempotency key, by slug)
about what it did before it was killed. Identifiers are sequential per kind, so the same
workload gives the same ids on every run.
"""

from __future__ import annotations

import json
from typing import Any

from killpoint.fake_services._db import Database


class StateStore:
    """JSON documents per kind, findable by id, idempotency key or a lookup field."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def count(self, kind: str) -> int:
        row = self.db.fetchone("SELECT COUNT(*) FROM resources WHERE kind = ?", (kind,))
        assert row is not None
        return int(row[0])

    def next_id(self, kind: str, prefix: str) -> str:
        return f"{prefix}_{self.count(kind) + 1:06d}"

    def insert(
        self,
        kind: str,
        id: str,
        data: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        lookup: str | None = None,
        fingerprint: str | None = None,
    ) -> None:
        self.db.execute(
            "INSERT INTO resources (kind, id, idempotency_key, lookup, fingerprint, data)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (kind, id, idempotency_key, lookup, fingerprint, json.dumps(data)),
        )

    def replace(self, kind: str, id: str, data: dict[str, Any]) -> None:
        self.db.execute(
            "UPDATE resources SET data = ? WHERE kind = ? AND id = ?",
            (json.dumps(data), kind, id),
        )

    def get(self, kind: str, id: str) -> dict[str, Any] | None:
        row = self.db.fetchone("SELECT data FROM resources WHERE kind = ? AND id = ?", (kind, id))
        return None if row is None else _load(row[0])

    def all(self, kind: str) -> list[dict[str, Any]]:
        """Every document of a kind, oldest first (a search the lookup column cannot serve)."""
        rows = self.db.fetchall("SELECT data FROM resources WHERE kind = ? ORDER BY rowid", (kind,))
        return [_load(row[0]) for row in rows]

    def delete(self, kind: str, id: str) -> None:
        self.db.execute("DELETE FROM resources WHERE kind = ? AND id = ?", (kind, id))

    def by_idempotency_key(self, kind: str, key: str) -> tuple[str, dict[str, Any]] | None:
        """The (fingerprint, document) first stored under an idempotency key."""
        row = self.db.fetchone(
            "SELECT fingerprint, data FROM resources WHERE kind = ? AND idempotency_key = ?"
            " ORDER BY rowid LIMIT 1",
            (kind, key),
        )
        return None if row is None else (str(row[0]), _load(row[1]))

    def by_lookup(self, kind: str, lookup: str) -> list[dict[str, Any]]:
        rows = self.db.fetchall(
            "SELECT data FROM resources WHERE kind = ? AND lookup = ? ORDER BY rowid",
            (kind, lookup),
        )
        return [_load(row[0]) for row in rows]

    def put_blob(self, sha256: str, data: bytes, media_type: str) -> bool:
        """Store bytes under their hash; False when they were already there."""
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO blobs (sha256, media_type, data) VALUES (?, ?, ?)",
            (sha256, media_type, data),
        )
        return cursor.rowcount == 1

    def get_blob(self, sha256: str) -> tuple[bytes, str] | None:
        row = self.db.fetchone("SELECT data, media_type FROM blobs WHERE sha256 = ?", (sha256,))
        return None if row is None else (bytes(row[0]), str(row[1]))


def _load(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text)
    return data
