"""The ground truth: what each fake service saw and what it actually did.

The oracle must not trust the engine's own ledger to decide whether an effect ran twice, so every
service writes an append-only journal of its own: one ``requests`` row when a request arrives
(committed before any work, so "the service saw it" survives a crash) and one ``effects`` row in
the same transaction as the state change it describes, committed before the response leaves.
:meth:`Journal.open` reads a file another process wrote, including one whose server was SIGKILLed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from killpoint.fake_services._db import Database

_REQUEST_COLUMNS = (
    "seq, service, operation, idempotency_key, business_key, fingerprint, time, outcome, body,"
    " origin"
)
_EFFECT_COLUMNS = (
    "seq, service, operation, business_key, idempotency_key, fingerprint, time, resource_id, origin"
)


def fingerprint(body: Any) -> str:
    """sha256 of a request body: raw bytes as they are, anything else as canonical JSON."""
    if isinstance(body, bytes):
        return hashlib.sha256(body).hexdigest()
    return hashlib.sha256(canonical(body).encode()).hexdigest()


def canonical(body: Any) -> str:
    """A JSON body as the journal keeps it: sorted keys, no spaces, so equal bodies read equal."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def journaled_body(body: Any) -> str | None:
    """What the journal keeps of a request's body: its canonical JSON, so the oracle can tell
    what a request carried (an amount, a target); nothing for raw bytes (a file's content is
    judged by its fingerprint)."""
    return None if isinstance(body, bytes) else canonical(body)


EMPTY = fingerprint(b"")  # a request without a body (a GET, a DELETE): it carries its key alone


@dataclass(frozen=True)
class RequestRecord:
    """One delivery of a request to a service, and how the service ended it."""

    seq: int
    service: str
    operation: str
    idempotency_key: str | None
    business_key: str | None
    fingerprint: str
    time: float
    outcome: str
    body: str | None = None  # canonical JSON of a JSON body; None for bytes (`journaled_body`)
    # who sent it, as the harness's client said (`ORIGIN_HEADER`); None: nobody said
    origin: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)  # flat fields: what asdict gives, without its deep copy


@dataclass(frozen=True)
class AppliedEffect:
    """One state change a service really made (a charge, a post, a sent message ...)."""

    seq: int
    service: str
    operation: str
    business_key: str
    idempotency_key: str | None
    fingerprint: str
    time: float
    resource_id: str
    origin: str | None = None  # the origin of the request that applied it

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)  # flat fields: what asdict gives, without its deep copy


class Journal:
    """Record (services) and read (oracle, tests) the ground truth of one database file."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # (db.epoch, seq) of the latest request this journal wrote, while it is the only writer
        self._last: tuple[int, int] | None = None

    @classmethod
    def open(cls, path: str | Path) -> Journal:
        """Open a journal file, possibly written by another (live or killed) process."""
        return cls(Database(path))

    @classmethod
    def memory(cls) -> Journal:
        """A private in-memory journal for fast in-process tests."""
        return cls(Database(None))

    @property
    def path(self) -> str:
        return self.db.path

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing (the services) ------------------------------------------------------------

    def record_request(
        self,
        service: str,
        operation: str,
        *,
        idempotency_key: str | None,
        business_key: str | None,
        fingerprint: str,
        time: float,
        outcome: str = "received",
        body: str | None = None,
        origin: str | None = None,
    ) -> RequestRecord:
        """Record (and, outside a transaction, commit) a delivery on arrival."""
        values = (
            service,
            operation,
            idempotency_key,
            business_key,
            fingerprint,
            time,
            outcome,
            body,
            origin,
        )
        cursor = self.db.execute(
            "INSERT INTO requests (service, operation, idempotency_key, business_key,"
            " fingerprint, time, outcome, body, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )
        assert cursor.lastrowid is not None
        if self.db.private:
            self._last = (self.db.epoch, cursor.lastrowid)
        return RequestRecord(cursor.lastrowid, *values)

    def set_outcome(self, request_seq: int, outcome: str) -> None:
        self.db.execute("UPDATE requests SET outcome = ? WHERE seq = ?", (outcome, request_seq))

    def set_business_key(self, request_seq: int, business_key: str) -> None:
        self.db.execute(
            "UPDATE requests SET business_key = ? WHERE seq = ?", (business_key, request_seq)
        )

    def apply_effect(self, request: RequestRecord, resource_id: str) -> AppliedEffect:
        """Record that ``request`` changed state; call inside the state change's transaction."""
        if request.business_key is None:
            raise ValueError(f"an effect needs a business key: {request}")
        cursor = self.db.execute(
            "INSERT INTO effects (request_seq, service, operation, business_key,"
            " idempotency_key, fingerprint, time, resource_id, origin)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                request.seq,
                request.service,
                request.operation,
                request.business_key,
                request.idempotency_key,
                request.fingerprint,
                request.time,
                resource_id,
                request.origin,
            ),
        )
        assert cursor.lastrowid is not None
        return AppliedEffect(
            cursor.lastrowid,
            request.service,
            request.operation,
            request.business_key,
            request.idempotency_key,
            request.fingerprint,
            request.time,
            resource_id,
            request.origin,
        )

    # -- reading (the oracle) --------------------------------------------------------------

    def requests(self, service: str | None = None) -> list[RequestRecord]:
        where, params = _filters(service=service)
        rows = self.db.fetchall(
            f"SELECT {_REQUEST_COLUMNS} FROM requests{where} ORDER BY seq", params
        )
        return [RequestRecord(*row) for row in rows]

    def requests_after(self, t: float) -> list[RequestRecord]:
        """Requests that arrived strictly after time ``t`` of the injected clock."""
        rows = self.db.fetchall(
            f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE time > ? ORDER BY seq", (t,)
        )
        return [RequestRecord(*row) for row in rows]

    def applied_effects(
        self, service: str | None = None, business_key: str | None = None
    ) -> list[AppliedEffect]:
        where, params = _filters(service=service, business_key=business_key)
        rows = self.db.fetchall(
            f"SELECT {_EFFECT_COLUMNS} FROM effects{where} ORDER BY seq", params
        )
        return [AppliedEffect(*row) for row in rows]

    def last_seq(self) -> int:
        """The sequence number of the latest request (0 before any): a position in time.

        Asked at every boundary hit, so a private (in-memory) journal answers from what it
        wrote last, unless a rollback or a reset since may have undone it."""
        if self._last is not None and self._last[0] == self.db.epoch:
            return self._last[1]
        row = self.db.fetchone("SELECT COALESCE(MAX(seq), 0) FROM requests")
        assert row is not None
        if self.db.private:
            self._last = (self.db.epoch, int(row[0]))
        return int(row[0])

    def attempts(self, idempotency_key: str) -> int:
        """How many deliveries carrying ``idempotency_key`` any service saw."""
        row = self.db.fetchone(
            "SELECT COUNT(*) FROM requests WHERE idempotency_key = ?", (idempotency_key,)
        )
        assert row is not None
        return int(row[0])

    def effects_by_business_key(self, service: str) -> dict[str, int]:
        """Number of applied effects per business key of one service."""
        rows = self.db.fetchall(
            "SELECT business_key, COUNT(*) FROM effects WHERE service = ?"
            " GROUP BY business_key ORDER BY business_key",
            (service,),
        )
        return {str(key): int(count) for key, count in rows}


def _filters(**columns: str | None) -> tuple[str, list[str]]:
    given = {name: value for name, value in columns.items() if value is not None}
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{name} = ?" for name in given), list(given.values())
