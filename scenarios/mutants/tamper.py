"""Mutants that only a realistic tampering exposes: each checks something, but not enough.

Each is the reference engine with one seam overridden, written from seed 000's fault table
("Checkpoint record is tampered", "Checkpoint schema is old", "Artifact is missing or hash
differs"): a loader that checks the seal but not what the seal vouches for (the tenant, the
workflow, the sequence), a migration that defaults one missing security field, a ledger row
trusted without its log, and artifact
reads that check something cheaper than the hash (the size), accept any of the run's
artifacts, or take a file cut short for an upload still in flight.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

from killpoint.contract.artifacts import ArtifactStore, FolderArtifacts
from killpoint.contract.context import StepContext
from killpoint.contract.errors import ArtifactError
from killpoint.contract.records import ArtifactRef, BudgetLimits
from killpoint.contract.workflow import Step, Transition
from killpoint.reference.checkpoint import Checkpoint, StoredCheckpoint, parse_sealed, upgrade
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import IntegrityError, QuarantinedError, WrongTenantError
from killpoint.reference.fold import Change
from killpoint.reference.integrity import verify_seal
from killpoint.reference.ledger import Session
from killpoint.reference.steps import Steps

DAY_S = 86400.0


def _opened(stored: StoredCheckpoint, key: bytes) -> Checkpoint:
    """The sealed bytes, checked against the tenant the row names, then parsed."""
    verify_seal(stored.body, stored.tenant, stored.tag, key)
    return Checkpoint.model_validate(upgrade(parse_sealed(stored.body)))


class SealNotTenant(Engine):
    """000: a tampered checkpoint trusted — the seal is checked, not whose checkpoint it is."""

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        """The seal is checked against the row's own tenant, and that is all about tenancy."""
        cp = _opened(stored, key)
        if cp.workflow_id != stored.workflow_id or cp.sequence != stored.sequence:
            raise IntegrityError("checkpoint body disagrees with its row")
        return cp


class SealNotWorkflow(Engine):
    """000: a tampered checkpoint trusted — sealed and ours, but of which workflow is not asked."""

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        if stored.tenant != self.settings.tenant:
            raise WrongTenantError(f"checkpoint belongs to tenant {stored.tenant!r}")
        cp = _opened(stored, key)
        if cp.tenant != self.settings.tenant or cp.sequence != stored.sequence:
            raise IntegrityError("checkpoint body disagrees with its row")
        return cp


class SealNotSequence(Engine):
    """000: a rolled-back checkpoint trusted — any valid seal of this workflow will do, whatever
    its sequence against the latest committed one."""

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        if stored.tenant != self.settings.tenant:
            raise WrongTenantError(f"checkpoint belongs to tenant {stored.tenant!r}")
        cp = _opened(stored, key)
        if cp.tenant != self.settings.tenant or cp.workflow_id != stored.workflow_id:
            raise IntegrityError("checkpoint body disagrees with its row")
        return cp


class LegacyLimitsDefaulted(Engine):
    """000: an old schema migrated by defaulting one missing security field — the budget."""

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        """A v1 checkpoint without its limits gets the default ones; any other gap still
        quarantines."""
        try:
            return super().open(stored, key)
        except QuarantinedError:
            doc = parse_sealed(stored.body)
            if doc.get("limits") is not None:
                raise
            limits = BudgetLimits()
            doc["limits"] = {
                "attempts": limits.attempts,
                "steps": limits.steps,
                "cost": limits.cost,
                "time_ms": int(limits.time_s * 1000),
            }
            return Checkpoint.model_validate(upgrade(doc))


class LegacyApprovalNeverLapses(Engine):
    """000: an old schema migrated by defaulting one missing security field — an approval's
    expiry, taken as a day after the checkpoint was written."""

    def open(self, stored: StoredCheckpoint, key: bytes) -> Checkpoint:
        try:
            return super().open(stored, key)
        except QuarantinedError:
            doc = parse_sealed(stored.body)
            if doc.get("approved_by") is None or doc.get("approval_expires_at") is not None:
                raise
            doc["approval_expires_at"] = float(doc["created_at"]) + DAY_S
            return Checkpoint.model_validate(upgrade(doc))


class LedgerTrustedAsItStands(Engine):
    """001: the ledger row trusted as it stands — a row that says `prepared` is never sent,
    even when its own append-only log shows the call was made."""

    def check_ledger(self, cp: Checkpoint) -> None:
        """Nothing to check: the row is the truth."""


# -- artifact reads ----------------------------------------------------------------------------


def _size_path(folder: FolderArtifacts, sha: str) -> Path:
    return folder.path(sha).with_suffix(".size")


class _SizeChecked:
    """An artifact store whose reads check the size written beside each file, not the hash."""

    def __init__(self, inner: ArtifactStore) -> None:
        assert isinstance(inner, FolderArtifacts)
        self.inner = inner

    def put(self, data: bytes) -> tuple[str, str]:
        return self.inner.put(data)

    def get(self, sha256: str) -> bytes:
        size = _size_path(self.inner, sha256)
        if not size.exists():
            return self.inner.get(sha256)
        try:
            data = self.inner.path(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise ArtifactError(f"artifact {sha256[:12]}… is missing") from exc
        if len(data) != int(size.read_text()):
            raise ArtifactError(f"artifact {sha256[:12]}… is not the size recorded")
        return data


class SizeNotHash(Steps):
    """000: an artifact checked by its recorded size, not its hash (hashing big files is slow)."""

    def expensive(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        """As the reference, and the artifact's size is written beside it."""
        change = super().expensive(session, cp, transition)
        assert isinstance(self.artifacts, FolderArtifacts)
        for ref in change.artifacts.values():
            data = self.artifacts.get(ref.sha256)
            _size_path(self.artifacts, ref.sha256).write_text(str(len(data)))
        return change

    def context(self, session: Session, cp: Checkpoint, step: Step) -> StepContext:
        ctx = super().context(session, cp, step)
        return dataclasses.replace(ctx, store=_SizeChecked(ctx.store))


class _AnyKnownHash:
    """An artifact store whose reads accept bytes that hash to any artifact the run recorded."""

    def __init__(self, inner: ArtifactStore, known: set[str]) -> None:
        assert isinstance(inner, FolderArtifacts)
        self.inner, self.known = inner, known

    def put(self, data: bytes) -> tuple[str, str]:
        return self.inner.put(data)

    def get(self, sha256: str) -> bytes:
        try:
            data = self.inner.path(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise ArtifactError(f"artifact {sha256[:12]}… is missing") from exc
        if hashlib.sha256(data).hexdigest() not in self.known | {sha256}:
            raise ArtifactError(f"artifact {sha256[:12]}… is none of this run's")
        return data


class AnyKnownArtifact(Steps):
    """000: an artifact's bytes checked to be one of the run's artifacts, not the one asked for
    (a content-addressed store's dedupe index taken for a check)."""

    def context(self, session: Session, cp: Checkpoint, step: Step) -> StepContext:
        ctx = super().context(session, cp, step)
        known = {ref.sha256 for ref in ctx.artifact_refs.values()}
        return dataclasses.replace(ctx, store=_AnyKnownHash(ctx.store, known))


class _SizeRecorded:
    """The run's artifact folder, writing each artifact's size beside it as it is stored."""

    def __init__(self, inner: ArtifactStore) -> None:
        assert isinstance(inner, FolderArtifacts)
        self.inner = inner

    def put(self, data: bytes) -> tuple[str, str]:
        sha, uri = self.inner.put(data)
        _size_path(self.inner, sha).write_text(str(len(data)))
        return sha, uri

    def get(self, sha256: str) -> bytes:
        return self.inner.get(sha256)

    def cut_short(self, sha256: str) -> bool:
        """Whether the file is shorter than the size recorded when it was stored."""
        size, path = _size_path(self.inner, sha256), self.inner.path(sha256)
        return size.exists() and path.exists() and path.stat().st_size < int(size.read_text())


class InFlightUploadTrusted(Steps):
    """000: an artifact shorter than recorded taken for an upload still in flight, and reused
    as recorded (the other writer will finish it) instead of re-hashed and built again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.artifacts = _SizeRecorded(self.artifacts)

    def expensive(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        step = transition.step
        recorded = self.store.artifact(cp.workflow_id, step.name)
        assert isinstance(self.artifacts, _SizeRecorded)
        if recorded is None or not self.artifacts.cut_short(recorded[0]):
            return super().expensive(session, cp, transition)
        sha, uri, media_type = recorded
        ref = ArtifactRef(uri=uri, sha256=sha, media_type=media_type, produced_by=step.name)
        return Change(transition.target, artifacts={step.name: ref})
