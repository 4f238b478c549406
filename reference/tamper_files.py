"""Damaging the artifact files a workflow recorded, the ways a disk, a sync or a person does:
a trailer appended, the file removed, one bit flipped (same size), the file cut short, or the
files of two artifacts swapped (each then holds bytes that hash to the other one).

The artifacts' rows and the checkpoints that cite them are left as they were, so only a read
that re-hashes the bytes against the recorded hash tells the damage apart.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from killpoint.contract.artifacts import FolderArtifacts
from killpoint.reference import _schema as t
from killpoint.reference.integrity import canonical_json
from killpoint.reference.store import Store

ARTIFACT_KINDS = (
    "artifact_corrupt",
    "artifact_missing",
    "artifact_bitflip",
    "artifact_truncated",
    "artifact_swapped",
)


def _stranger(like: bytes) -> bytes:
    """Where a workflow keeps a single artifact, a swap puts this in its place: a well-formed
    JSON artifact, stored under its own hash, that this run never produced (longer than the
    one it replaces, so it is no truncation)."""
    return canonical_json({"note": "an artifact of another run", "pad": "-" * len(like)})


def tamper_artifact(store: Store, root: Path, workflow_id: str, kind: str) -> int:
    """Damage the files of every artifact the workflow recorded; returns how many it damaged."""
    a = t.artifacts.c
    with store.engine.connect() as conn:
        shas = list(
            conn.execute(
                select(a.sha256).where(a.workflow_id == workflow_id).order_by(a.created_at)
            ).scalars()
        )
    folder = FolderArtifacts(root)
    paths = [folder.path(sha) for sha in shas if folder.path(sha).exists()]
    if kind == "artifact_swapped":
        return _swap(folder, paths)
    for path in paths:
        data = path.read_bytes()
        if kind == "artifact_missing":
            path.unlink()
        elif kind == "artifact_bitflip":
            path.write_bytes(_flipped(data))
        elif kind == "artifact_truncated":
            path.write_bytes(data[: len(data) // 2])
        else:
            path.write_bytes(data + b"\n<!-- altered -->")
    return len(paths)


def _flipped(data: bytes) -> bytes:
    """One bit flipped in the middle, kept printable (a letter's case) where it can be."""
    flipped = bytearray(data)
    at = len(data) // 2
    letters = [i for i in range(at, len(data)) if chr(flipped[i]).isalpha()]
    at = letters[0] if letters else at
    flipped[at] ^= 0x20 if letters else 0x01
    return bytes(flipped)


def _swap(folder: FolderArtifacts, paths: list[Path]) -> int:
    """Each file takes the next one's bytes (the last the first's); a lone one a stranger's."""
    if not paths:
        return 0
    contents = [p.read_bytes() for p in paths]
    if len(paths) == 1:
        stranger = _stranger(contents[0])
        folder.put(stranger)
        contents.append(stranger)
    for path, data in zip(paths, contents[1:] + contents[:1], strict=False):
        path.write_bytes(data)
    return len(paths)
