"""A mutant that fails with an exception of its own, not one of killpoint's: the harness must
judge it (`engine_failure`), save its schedule and replay it, never die with it."""

from __future__ import annotations

import json
from dataclasses import replace

from killpoint.contract.artifacts import ArtifactStore, FolderArtifacts
from killpoint.contract.context import StepContext
from killpoint.contract.workflow import Step
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.ledger import Session
from killpoint.reference.steps import Steps


class ParsedBeforeHashed:
    """Reads a JSON artifact back by parsing the file first, to hand over a document, and
    checks its hash only afterwards: a corrupt file raises the parser's error, not the
    `ArtifactError` on which the reference regenerates or escalates."""

    def __init__(self, inner: FolderArtifacts) -> None:
        self.inner = inner

    def put(self, data: bytes) -> tuple[str, str]:
        return self.inner.put(data)

    def get(self, sha256: str) -> bytes:
        path = self.inner.path(sha256)
        if path.exists():
            json.loads(path.read_bytes())  # every artifact here is a JSON document
        return self.inner.get(sha256)


class ArtifactParsedBeforeHashCheck(Steps):
    """000: an altered artifact parsed before its hash is checked."""

    def context(self, session: Session, cp: Checkpoint, step: Step) -> StepContext:
        """A step's code reads earlier artifacts through a reader that parses them first."""
        ctx = super().context(session, cp, step)
        store: ArtifactStore = ctx.store
        if isinstance(store, FolderArtifacts):
            store = ParsedBeforeHashed(store)
        return replace(ctx, store=store)
