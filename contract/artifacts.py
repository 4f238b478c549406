"""Content-addressed artifact storage: bytes by sha256 in a folder, never trusted on read.

Large outputs stay out of the transactional checkpoint row; the checkpoint keeps only the uri
and the hash, and every read re-hashes, so a missing or altered file stops the run instead of
being published.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Protocol

from killpoint.contract.errors import ArtifactError


class ArtifactStore(Protocol):
    def put(self, data: bytes) -> tuple[str, str]:
        """Store bytes; return (sha256, uri)."""
        ...

    def get(self, sha256: str) -> bytes:
        """The bytes whose hash is sha256; `ArtifactError` if missing or altered."""
        ...


class FolderArtifacts:
    """Artifacts as files named by their hash, written atomically (temp file and rename)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> tuple[str, str]:
        """Store bytes under their hash; a damaged copy already there is written over, so the
        run that produces the same content again repairs it (runs share this folder)."""
        digest = _sha256(data)
        target = self.path(digest)
        if not self._holds(target, digest):
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, target)
        return digest, f"artifact:sha256/{digest}"

    @staticmethod
    def _holds(target: Path, digest: str) -> bool:
        try:
            return _sha256(target.read_bytes()) == digest
        except FileNotFoundError:
            return False

    def get(self, sha256: str) -> bytes:
        try:
            data = self.path(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise ArtifactError(f"artifact {sha256[:12]}… is missing") from exc
        if _sha256(data) != sha256:
            raise ArtifactError(f"artifact {sha256[:12]}… does not match its sha256")
        return data


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
