"""A mutant of deploys around in-flight runs (seed 000: "Plan deployment around in-flight
runs"; "Never let a new model silently reinterpret an old action status")."""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.deploy import Refused
from killpoint.reference.dispatcher import Engine
from killpoint.reference.ledger import Session


class ResumesAcrossVersions(Engine):
    """000: ignoring version drift — a worker runs whatever run it is handed on its own code."""

    def admit(
        self, session: Session, wf: Workflow, cp: Checkpoint, key: bytes
    ) -> Checkpoint | Refused:
        """No compatibility check, no strategy: an old run resumes on new code as it is."""
        return cp
