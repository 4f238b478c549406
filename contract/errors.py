"""The errors every engine and scenario shares: what a user got wrong, what a service answered.

All derive from `KillpointError` so the CLI can print them as user errors without a traceback.
The three outcomes of a downstream call are here because a scenario's adapters raise them and
every engine must tell them apart: `OutcomeUnknown` (it may have happened), `EffectRejected`
(it definitely did not) and `CannotTell` (the service cannot be asked). None derives from
`BaseException` directly: that is reserved for an injected death, which no engine may catch.
"""

from __future__ import annotations


class KillpointError(Exception):
    """Base of every error the harness reports to a user."""


class DefinitionError(KillpointError):
    """A workflow, scenario or engine definition is inconsistent and was rejected at load time."""


class ArtifactError(KillpointError):
    """An artifact is missing or its content does not match its sha256."""


class OutcomeUnknown(KillpointError):
    """A downstream call may or may not have taken effect (timeout, lost response, 5xx).

    Jepsen calls this an *info* operation. It is never a failure: the effect must be reconciled.
    """


class EffectRejected(KillpointError):
    """The downstream service definitely refused the request; nothing was applied."""


class CannotTell(KillpointError):
    """The downstream service offers no way to learn whether an effect happened."""
