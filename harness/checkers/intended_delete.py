"""Intended delete: a delete removes only a version of the file the run itself wrote.

Seed 001: "For deletes, verify the resource state before and after." An object store answers a
DELETE with 204 whatever was at the name, so an engine that deletes by name alone removes
whatever is there: a newer version another writer saved meanwhile, as readily as its own. The
files service's journal names the version each write left and each delete removed (their
ETags), and holds every write the world saw since it was reset but another writer's, which is
the world's doing, not the run's: a delete of a version no earlier write of the run made is
false. The evidence is the journal alone, for any engine, and always complete, so it is never
unknown.
"""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.fake_services.files import SERVICE
from killpoint.harness.checkers._common import cite_effect, ok, violated
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "intended_delete"


def check_intended_delete(history: History, workflow: Workflow) -> Verdict:
    written: dict[str, list[str]] = {}
    deletes = 0
    for e in (e for e in history.applied if e.service == SERVICE):
        if e.operation != "delete":
            written.setdefault(e.business_key, []).append(e.resource_id)
            continue
        deletes += 1
        own = written.get(e.business_key, [])
        if e.resource_id not in own:
            versions = ", ".join(v[:12] + "…" for v in own) or "nothing"
            return violated(
                NAME,
                f"{SERVICE}.delete [{e.business_key}] removed version {e.resource_id[:12]}…, "
                "which no write of this run made: another writer's",
                [cite_effect(e), f"this run wrote [{e.business_key}] as: {versions}"],
                [EvidenceRef(kind="effect", index=e.seq)],
            )
    return ok(NAME, f"{deletes} delete(s), each of a version this run wrote")
