"""Which runs keep their history in the result: the report draws timelines from them.

A history is some 20 KB of JSON. Every violation keeps its own; a campaign may stop hundreds of
runs for review, so of runs in doubt (judged unknown, or waiting for a person) each process keeps
the first `MAX_DOUBTED_HISTORIES` of each kind.
"""

from __future__ import annotations

from collections import Counter

from killpoint.harness.operator import QUEUED
from killpoint.harness.results import Valid

MAX_DOUBTED_HISTORIES = 20


def in_doubt(valid: Valid, final_status: str) -> bool:
    """Judged unknown, or ended waiting for a person: the report names it with its reason."""
    return valid == "unknown" or final_status in QUEUED


class KeptHistories:
    """Counts the histories of runs in doubt kept so far, per kind (unknown, waiting)."""

    def __init__(self) -> None:
        self.kept: Counter[str] = Counter()

    def keeps(self, valid: Valid, final_status: str) -> bool:
        if valid is False:
            return True
        if not in_doubt(valid, final_status):
            return False
        kind = "unknown" if valid == "unknown" else "waiting"
        if self.kept[kind] >= MAX_DOUBTED_HISTORIES:
            return False
        self.kept[kind] += 1
        return True
