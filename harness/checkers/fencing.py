"""Fencing: fencing tokens only grow, a token belongs to one lease holder, and no write lands
under a token another holder has superseded.

Its evidence is the token each committed checkpoint was written under (the only token the
engine protocol exposes): along the lineage a token never falls (a write under a superseded
token), and the checkpoints written under one token are the writes of one worker. A checkpoint
is placed in the workers whose span on the world clock holds its time; two workers that ran at
once share a span, so a token used within it is consistent with either, and one used by two
workers that ran apart is proved shared: the takeover kept the old holder's token, and the fence
can no longer tell them apart. A tampered checkpoint is the attacker's write, not the engine's,
and is left out. Without a history reader, or with checkpoints that carry no token, unknown.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import ok, unknown, violated
from killpoint.harness.history import History
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "fencing"


def _cite(cp: CheckpointRecord) -> str:
    token, at = cp.fencing_token, cp.created_at
    return f"checkpoint #{cp.sequence} ({cp.state}) under token {token} at t={at:.1f}"


def _refs(*cps: CheckpointRecord) -> list[EvidenceRef]:
    return [EvidenceRef(kind="checkpoint", index=c.sequence) for c in cps]


def check_fencing(history: History, workflow: Workflow) -> Verdict:
    if not history.readable:
        return unknown(NAME, "the engine exposes no history reader: its tokens are not visible")
    altered = {t.sequence for t in history.staged}
    cps = sorted(
        (c for c in history.checkpoints if c.sequence not in altered), key=lambda c: c.sequence
    )
    if not cps:
        return unknown(NAME, "the engine's history reader shows no checkpoint of this run")
    bare = [c.sequence for c in cps if c.fencing_token is None]
    if bare:
        return unknown(NAME, f"checkpoint #{bare[0]} carries no fencing token")
    for a, b in itertools.pairwise(cps):
        if (b.fencing_token or 0) < (a.fencing_token or 0):
            return violated(
                NAME,
                f"checkpoint #{b.sequence} landed under token {b.fencing_token} after "
                f"#{a.sequence} was written under {a.fencing_token}: a superseded token",
                [_cite(a), _cite(b)],
                _refs(a, b),
            )
    shared = _shared_token(history, cps)
    if isinstance(shared, Verdict):
        return shared
    if shared is not None:
        return unknown(NAME, f"checkpoint #{shared}'s time falls in no worker's span")
    return ok(NAME, f"tokens {cps[0].fencing_token}..{cps[-1].fencing_token}, one holder each")


def _shared_token(history: History, cps: list[CheckpointRecord]) -> Verdict | int | None:
    """Two workers that ran apart, each writing under the same token; else the sequence of a
    checkpoint no worker's span holds (another clock: not placed), if any."""
    by_token: dict[int, list[CheckpointRecord]] = defaultdict(list)
    for cp in cps:
        by_token[cp.fencing_token or 0].append(cp)
    unplaced = None
    for token, written in by_token.items():
        holders: set[int] | None = None
        for cp in written:
            placed = {
                w.worker for w in history.workers if w.started_at <= cp.created_at <= w.ended_at
            }
            if not placed:
                unplaced = cp.sequence if unplaced is None else unplaced
            elif holders is not None and not holders & placed:
                return violated(
                    NAME,
                    f"token {token} was written under by two workers that ran apart: a "
                    "takeover kept the old holder's token",
                    [_cite(written[0]), _cite(cp)],
                    _refs(written[0], cp),
                )
            else:
                holders = placed if holders is None else holders & placed
    return unplaced
