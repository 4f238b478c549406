"""What a call to a fake service can end in, from the caller's side.

Jepsen's three outcomes: ``ok`` (a return value), ``fail`` (:class:`Rejected`: the service said
no, nothing was applied) and ``info`` (:class:`OutcomeUnknown`: a timeout, a lost response or a
5xx, so the effect may or may not have happened). Keeping "unknown" apart from "failed" is the
point: an engine that treats a timeout as a failure and simply retries is the bug we hunt.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """Base class of everything the typed clients raise."""


class OutcomeUnknown(ServiceError):
    """The request may or may not have taken effect (timeout, lost response, 5xx)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Rejected(ServiceError):
    """A 4xx answer: the service refused, nothing was applied."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body


class NotFound(Rejected):
    """A 404: the thing looked up does not exist (or is not visible)."""

    def __init__(self, body: Any = None) -> None:
        super().__init__(404, body)


class ArtifactCorrupt(ServiceError):
    """The bytes served for an artifact do not hash to the address they were asked by."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(f"artifact {expected} came back with sha256 {actual}")
        self.expected = expected
        self.actual = actual
