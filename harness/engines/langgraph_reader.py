"""LangGraph's own checkpoints of a thread, read back for the oracle.

The reader asks the saver (`list`), as a user inspecting a thread would, and numbers the
checkpoints by LangGraph's own step (-1, 0, 1, …) shifted to 1, 2, 3, …: two checkpoints of
one step — a thread forked by two workers resuming from one checkpoint — keep one number, so
the sequence checker says so. LangGraph keeps no effect ledger (`ledger = False`); approvals
are the units' grants file.
"""

from __future__ import annotations

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.graph import START

from killpoint.harness.engines import units
from killpoint.harness.engines.langgraph import CHANNEL, open_saver, thread
from killpoint.harness.engines.units_reader import UnitsReader
from killpoint.harness.protocol import CheckpointRecord


def _doc_of(found: CheckpointTuple) -> units.State | None:
    values = found.checkpoint["channel_values"]
    doc = values.get(CHANNEL)
    if doc is None:  # the input checkpoint holds the input on START's channel
        doc = (values.get(START) or {}).get(CHANNEL)
    return doc if isinstance(doc, dict) else None


class LangGraphReader(UnitsReader):
    """LangGraph's own checkpoints of a thread, oldest first, numbered by LangGraph's step
    (-1, 0, 1, … as 1, 2, 3, …): two checkpoints of one step — a fork — keep one number."""

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]:
        with open_saver(self.handle) as saver:
            found = list(saver.list(thread(workflow_id)))
            sized = [(t, len(saver.serde.dumps_typed(t.checkpoint)[1])) for t in found]
        sized.sort(key=lambda ts: (int(ts[0].metadata["step"]), ts[0].checkpoint["id"]))
        records = []
        for t, size in sized:
            doc = _doc_of(t)
            if doc is None:
                continue
            sequence = int(t.metadata["step"]) + 2
            records.append(units.checkpoint_record(self.workflow, sequence, doc, size))
        return records
