"""The engine's exceptions: each names a reason the run cannot go on as asked.

All derive from `KillpointError` so the CLI can print them as user errors without a traceback.
None derives from `BaseException` directly: that is reserved for an injected death, which no
engine code may catch.
"""

from __future__ import annotations


class KillpointError(Exception):
    """Base of every error the harness reports to a user."""


class DefinitionError(KillpointError):
    """A workflow definition is inconsistent and was rejected at load time."""


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


class ArtifactError(KillpointError):
    """An artifact is missing or its content does not match its sha256."""


class UnknownWorkflowError(KillpointError):
    """No workflow with that id is in the store."""


class OutcomeUnknown(KillpointError):
    """A downstream call may or may not have taken effect (timeout, lost response, 5xx).

    Jepsen calls this an *info* operation. It is never a failure: the effect must be reconciled.
    """


class EffectRejected(KillpointError):
    """The downstream service definitely refused the request; nothing was applied."""


class CannotTell(KillpointError):
    """The downstream service offers no way to learn whether an effect happened."""
