"""The reference engine's own errors: each names a reason a run cannot go on as asked.

They derive from the contract's `KillpointError`, so the harness and the CLI treat them as any
engine's errors: a worker that raises one ends with it, a user sees one line.
"""

from __future__ import annotations

from killpoint.contract.errors import KillpointError


class IntegrityError(KillpointError):
    """A stored checkpoint failed its integrity, tenant or schema check; nothing of it was used."""


class WrongTenantError(IntegrityError):
    """The checkpoint belongs to another tenant: refused, and not ours to mark either."""


class QuarantinedError(IntegrityError):
    """An old checkpoint cannot be migrated without inventing a security-relevant field."""


class ConflictError(KillpointError):
    """A compare-and-swap lost: another worker advanced the workflow first. Nothing was written."""


class StaleFenceError(ConflictError):
    """A write carried a fencing token older than the workflow's current one."""


class LeaseHeldError(KillpointError):
    """Another worker holds an unexpired lease on the workflow."""


class SecretMissingError(KillpointError):
    """A secret reference points at an environment variable that is not set."""


class WeakKeyError(KillpointError):
    """A checkpoint key shorter than `MIN_KEY_BYTES`: a guessable key makes every seal forgeable."""


class UnknownWorkflowError(KillpointError):
    """No workflow with that id is in the store."""
