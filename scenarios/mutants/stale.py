"""A mutant only a worker paused at the right place exposes: a slow worker whose lease lapsed.

Seed 001: "Leases need expirations and fencing tokens so a slow worker cannot write after its
lease has been replaced." The engine here takes it to the letter: every write to its store is
fenced (token and unexpired lease, in the write's own transaction), so a worker paused at its
lease fails its next write and stops. But the write the send follows, `started`, is the last
the fence sees: the engine takes a `started` mark committed under its token for the right to
send, and sends without a second look at its lease. A worker paused between the two (a long GC,
a stalled VM, a clock that stood still) wakes after a new owner took the run over, found the
effect never sent, sent it and went on, and sends it once more: a second post on a service that
does not dedup. Fencing tokens guard the store, not the service the request goes to.
"""

from __future__ import annotations

import dataclasses

from pydantic import JsonValue

from killpoint.reference.dispatcher import Engine
from killpoint.reference.lease import Lease
from killpoint.reference.ledger import Session


class _FencedWritesOnly(Session):
    """A session that leaves the lease to the store's fence."""

    def check_lease(self) -> None:
        """The `started` mark was committed under this worker's token and unexpired lease one
        statement ago: the attempt is taken for its own, and the clock is not read again."""


class StartedMarkTakenAsLease(Engine):
    """001: leases and fencing tokens for the store's writes — the lease checked when `started`
    is committed (a fenced write) and not again before the request is sent."""

    def session(self, lease: Lease, outputs: dict[str, JsonValue]) -> Session:
        """The reference's session, whose sends trust the fenced `started` mark."""
        held = super().session(lease, outputs)
        fields = {f.name: getattr(held, f.name) for f in dataclasses.fields(held)}
        return _FencedWritesOnly(**fields)
