"""The kinds of tampering a schedule may ask for: an open table, one row per kind.

A schedule's `Tamper` names a kind from `TAMPER_KINDS`; between two workers the harness hands it
to the engine's tamper hook (`EngineSpec.tamper`), which stages it on its own store or declines
(returns None: no hook, not that kind, or nothing there to alter, such as an artifact in a
scenario that keeps none). A declined tampering altered nothing, so the run is no test of its
recovery: the case's expected recovery and the checkers that need the tampering answer unknown.

Each row says what a correct engine must do with the tampered store, which is what the checkers
then expect of a run where the hook staged it:

- `refused`: the loader must refuse the checkpoint before acting on it — nothing is sent and no
  checkpoint is built on it (`authority`); ending `quarantined` is then the expected outcome.
- `stops`: final statuses the tampering explains besides the scenario's own (an artifact that
  no longer matches its hash may stop the run for review rather than be used).

An engine or a team adds a kind with `register`; its hook then stages it, and the oracle
judges runs that use it by its row.
"""

from __future__ import annotations

from dataclasses import dataclass

from killpoint.contract.errors import KillpointError


@dataclass(frozen=True)
class TamperKind:
    """One kind of tampering: what it alters, what an attacker or a failure does, and what a
    correct engine must then do."""

    name: str
    target: str  # "checkpoint", "outputs", "artifact" or "ledger": what the hook alters
    what: str
    refused: bool = False
    stops: frozenset[str] = frozenset()

    def explains(self, status: str) -> bool:
        """Whether a correct engine may end `status` because of this tampering."""
        return status in self.stops or (self.refused and status == "quarantined")


REVIEW = frozenset({"needs_review"})
TAMPER_KINDS: dict[str, TamperKind] = {}


def register(kind: TamperKind) -> TamperKind:
    """Add a kind to the table (a kind of the same name is replaced)."""
    TAMPER_KINDS[kind.name] = kind
    return kind


def tamper_kind(name: str) -> TamperKind:
    """The row of `name`; a `KillpointError` naming the known kinds otherwise."""
    try:
        return TAMPER_KINDS[name]
    except KeyError:
        known = ", ".join(sorted(TAMPER_KINDS))
        raise KillpointError(f"unknown tamper kind {name!r}; known: {known}") from None


def refused(name: str) -> bool:
    kind = TAMPER_KINDS.get(name)
    return kind is not None and kind.refused


for _kind in (
    TamperKind("flip_byte", "checkpoint", "one byte of the sealed body flipped", refused=True),
    TamperKind(
        "wrong_tenant",
        "checkpoint",
        "the row's tenant column rewritten; the seal still names the old tenant",
        refused=True,
    ),
    TamperKind(
        "foreign_tenant",
        "checkpoint",
        "another tenant's validly sealed checkpoint of this workflow put in place",
        refused=True,
    ),
    TamperKind(
        "foreign_workflow",
        "checkpoint",
        "another workflow's validly sealed checkpoint (same tenant) put in place",
        refused=True,
    ),
    TamperKind(
        "rollback",
        "checkpoint",
        "the latest checkpoint replaced by an older, validly sealed one of the same workflow",
        refused=True,
    ),
    TamperKind(
        "unsupported_schema",
        "checkpoint",
        "validly sealed, of a schema newer than the engine",
        refused=True,
    ),
    TamperKind("legacy_v2", "checkpoint", "as an older engine wrote it; migrates cleanly"),
    TamperKind(
        "legacy_unsafe",
        "checkpoint",
        "as the v1 engine wrote it before tenancy: no tenant",
        refused=True,
    ),
    TamperKind(
        "legacy_no_limits",
        "checkpoint",
        "as the v1 engine wrote it, tenant and all, without its budget limits",
        refused=True,
    ),
    TamperKind(
        "legacy_no_approval_expiry",
        "checkpoint",
        "as the v1 engine wrote it, with its approval but not the approval's expiry "
        "(declined where the checkpoint holds no approval)",
        refused=True,
    ),
    TamperKind(
        "legacy_v1",
        "checkpoint",
        "as the v1 engine wrote it, every field there: its limits and what it had spent apart "
        "(a partly spent budget) and its latest approval with the approval's expiry; migrates "
        "cleanly",
    ),
    TamperKind(
        "output_altered",
        "outputs",
        "a step output rewritten in its row, hash and all (or forged)",
        refused=True,
    ),
    TamperKind(
        "ledger_rolled_back",
        "ledger",
        "the latest settled ledger row set back to prepared, its receipt gone (a restore from "
        "a backup taken before the call); the append-only log of its transitions kept",
        refused=True,
    ),
    TamperKind(
        "artifact_corrupt", "artifact", "a trailer appended to every artifact", stops=REVIEW
    ),
    TamperKind("artifact_missing", "artifact", "every artifact file removed", stops=REVIEW),
    TamperKind(
        "artifact_bitflip",
        "artifact",
        "one bit flipped in every artifact: same size, other content",
        stops=REVIEW,
    ),
    TamperKind(
        "artifact_truncated", "artifact", "every artifact cut to half its size", stops=REVIEW
    ),
    TamperKind(
        "artifact_swapped",
        "artifact",
        "each artifact's file holds another artifact's bytes, which hash to that other one",
        stops=REVIEW,
    ),
):
    register(_kind)
