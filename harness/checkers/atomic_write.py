"""Atomic write: no reader could find a file partly written at a name the run publishes.

Seed 001: "For file writes, use content hashes and atomic rename." An object store shows a
whole PUT whole or not at all; a file written in pieces (a first write, then appends) is
readable partly written between the pieces, and torn for good if its writer dies between them.
The files service's journal says which: an `append` extended the object an earlier write left
at that name. So the evidence is the journal alone, for any engine: an append at a name the
scenario expects a whole file at (`ExpectedEffect` of `files`, operation `put` or unnamed) is
false; at a name it does not declare, where appending may be the point (a log), unknown.
"""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.fake_services.files import SERVICE
from killpoint.harness.checkers._common import cite_effect, ok, unknown, violated
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "atomic_write"


def check_atomic_write(history: History, workflow: Workflow) -> Verdict:
    whole = {
        e.business_key
        for e in history.expected
        if e.service == SERVICE and e.operation in (None, "put")
    }
    writes = [e for e in history.applied if e.service == SERVICE and e.operation != "delete"]
    undeclared = None
    for n, grown in enumerate(writes):
        if grown.operation != "append":
            continue
        if grown.business_key not in whole:
            undeclared = undeclared or grown.business_key
            continue
        earlier = (e for e in reversed(writes[:n]) if e.business_key == grown.business_key)
        torn = next(earlier, None)
        if torn is None:
            continue  # an append that created the object: torn only once another extends it
        return violated(
            NAME,
            f"{SERVICE} [{grown.business_key}] was written in pieces: readable partly written "
            "until a later append extended it",
            [cite_effect(torn), cite_effect(grown)],
            [
                EvidenceRef(kind="effect", index=torn.seq),
                EvidenceRef(kind="effect", index=grown.seq),
            ],
        )
    if undeclared is not None:
        return unknown(
            NAME, f"{SERVICE} [{undeclared}] was appended to; the scenario expects no file there"
        )
    return ok(NAME, f"{len(writes)} file write(s), each whole")
