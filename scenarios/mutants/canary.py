"""A mutant that keeps a secret it was handed: written from seed 000's "Do not serialize secrets
into a checkpoint simply because they were present in memory. Save references to
secret-manager entries and reacquire short-lived credentials during resume."

The reference engine's checkpoint names its key by reference (`secret_refs`: the environment
variable that holds it). This one carries the resolved key there instead, so that a resume on
a machine without the variable could still verify the seal. Every checkpoint is sealed as
before and every run ends as the reference's would: only a scan of what the engine stored
shows it (`secrets_kept`), and whoever reads the store can then seal a forged checkpoint
that the engine accepts ("Checkpoint record is tampered — Integrity verification rejects it"
no longer holds).
"""

from __future__ import annotations

from killpoint.contract.workflow import Step, Workflow
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.dispatcher import Engine
from killpoint.reference.fold import Change
from killpoint.reference.ledger import Session


class KeyCarriedInCheckpoint(Engine):
    """000: a secret serialized into the checkpoint because it was in memory."""

    def commit(
        self,
        session: Session,
        wf: Workflow,
        cp: Checkpoint,
        change: Change,
        step: Step | None,
        key: bytes,
    ) -> Checkpoint:
        """As the reference, with the key itself beside its reference, for a resume elsewhere."""
        carried = cp.model_copy(update={"secret_refs": (self.settings.secret.env, key.decode())})
        return super().commit(session, wf, carried, change, step, key)
