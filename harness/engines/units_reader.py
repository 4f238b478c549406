"""What every units adapter's history reader shares, whatever its framework keeps."""

from __future__ import annotations

from killpoint.contract.records import ApprovalRecord, EffectRecord
from killpoint.harness.engines.units import Grants, folder_of
from killpoint.harness.protocol import StoreHandle
from killpoint.harness.scenario import Scenario


class UnitsReader:
    """What every units adapter's history reader shares: no ledger (the frameworks keep none),
    the harness's grants as its approvals, nothing compacted, and the run's workflow (a team's
    own as much as a catalogue's: the reader is handed it). A reader adds `checkpoints`."""

    ledger = False

    def __init__(self, handle: StoreHandle, scenario: Scenario) -> None:
        self.handle = handle
        self.workflow = scenario.workflow
        self.grants = Grants(folder_of(handle))

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        return []

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        return self.grants.records(workflow_id)

    def compacted_below(self, workflow_id: str) -> int:
        return 0
