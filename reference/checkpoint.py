"""The checkpoint: what it holds, how it is sealed for the store, and how a stored one is opened.

Every field of the seed's checkpoint table has a home in `Checkpoint` and its parts, frozen
pydantic v2 models: they are what is stored, signed, read back and shown to operators, so they
are validated at every edge and never mutated in place.

A worker seals a checkpoint (`seal_checkpoint`) into the `NewCheckpoint` the store commits: its
bytes and an HMAC tag over them and the tenant (`integrity.seal`). Opening a stored one
(`open_checkpoint`) checks, before any field is used: the row's tenant is the expected tenant,
the tag matches the bytes (so nothing tampered is deserialized), the schema version is
supported; then an older schema is read up to this one (`upgrade`, over the chain in
`migrations.py`), and only then is the document validated into a `Checkpoint`: strictly (a
number is never read from a string, nor a count from `true`), closed (no unknown field), within
what the store can hold, and agreeing with its row about whose it is.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
)

from killpoint.contract.records import ArtifactRef, EffectStatus, RunStatus, Versions
from killpoint.reference._schema import INT32, INT64
from killpoint.reference.errors import IntegrityError, QuarantinedError, WrongTenantError
from killpoint.reference.integrity import canonical_json, seal, verify_seal
from killpoint.reference.migrations import MIGRATIONS, Doc

SCHEMA_VERSION: Literal[4] = 4


def _exact_int(value: object) -> object:
    if isinstance(value, bool | float):
        raise ValueError(f"a schema version is an integer, not {type(value).__name__}")
    return value


class Frozen(BaseModel):
    # No NaN or infinity: JSON has neither, and an approval that expires "at inf" never does.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Lineage(Frozen):
    """Which run of the workflow wrote the checkpoint, and why it exists (start, branch …)."""

    run_id: str
    parent_run_id: str | None = None
    # a deploy's decision too (`DeployStrategy`): which strategy took the run over the deploy
    decision: Literal["start", "continue", "branch", "restart", "drain", "migrate", "coexist"] = (
        "start"
    )


class EffectRef(Frozen):
    operation_id: str
    intent: str
    idempotency_key: str
    status: EffectStatus
    receipt_id: str | None = None


class ApprovalGrant(Frozen):
    gate: str
    actor: str
    scope: str
    policy_version: str
    expires_at: float


class Budget(Frozen):
    """What is left. Only ever decreases along a lineage, whatever crashes in between."""

    attempts_left: int = Field(ge=0, le=INT32)  # an attempt is spent only while one is left
    steps_left: int = Field(ge=0, le=INT32)  # likewise a step
    cost_left: int = Field(ge=-INT32, le=INT32)  # a step may cost more than was left
    time_left_ms: int = Field(ge=-INT64, le=INT64)  # negative past the deadline

    def exhausted(self) -> str | None:
        for name in ("attempts_left", "steps_left", "cost_left", "time_left_ms"):
            if getattr(self, name) <= 0:
                return name.split("_left")[0]
        return None


class PendingWork(Frozen):
    kind: Literal["approval", "reconcile", "review", "handoff", "verify"]
    ref: str
    detail: str = ""


class OutputsRef(Frozen):
    """Where the run's step outputs are: rows of their own, pinned here by a hash chain.

    A checkpoint holds pointers and hashes, not the whole history, so it stays the same size
    however many steps ran; the chain over each output's sequence, step and hash, in commit
    order, lets a resume detect an altered, missing or extra output row."""

    since: int = Field(ge=0, le=INT32)  # output rows of checkpoints after this one are the run's
    count: int = Field(default=0, ge=0, le=INT32)
    digest: str = ""  # "" while there are none


class Checkpoint(Frozen):
    """A committed, versioned, integrity-protected boundary of one workflow run."""

    # pydantic matches a literal by equality, even strictly: 4.0 would pass for 4
    schema_version: Annotated[Literal[4], BeforeValidator(_exact_int)] = SCHEMA_VERSION
    workflow_id: str
    workflow_name: str
    tenant: str
    lineage: Lineage
    sequence: int = Field(ge=1, le=INT32)
    state: str
    status: RunStatus
    status_reason: str = ""
    input: dict[str, JsonValue]
    input_hash: str
    versions: Versions
    artifacts: tuple[ArtifactRef, ...] = ()
    effects: tuple[EffectRef, ...] = ()
    approvals: tuple[ApprovalGrant, ...] = ()
    budget: Budget
    pending: tuple[PendingWork, ...] = ()
    next_actions: tuple[str, ...] = ()
    outputs_ref: OutputsRef
    outputs: dict[str, JsonValue] = Field(default_factory=dict)  # inline: from schema v3 only
    created_at: float
    secret_refs: tuple[str, ...] = ()


class StoredCheckpoint(Frozen):
    """A checkpoint row exactly as stored: bytes and tag, not yet trusted."""

    workflow_id: str
    sequence: int
    run_id: str
    state: str
    schema_version: int
    tenant: str
    body: bytes
    tag: str
    fencing_token: int
    created_at: float


class StepOutput(NamedTuple):
    """A step's small result as stored: canonical JSON and its hash."""

    sequence: int
    step: str
    value: str
    sha256: str


class NewCheckpoint(NamedTuple):
    """What a worker asks the store to commit at a boundary, with the outputs it made.

    A tuple, not a dataclass: one is built per step, and a frozen dataclass costs more to build
    than SQLite takes to store it."""

    sequence: int
    run_id: str
    state: str
    status: RunStatus
    status_reason: str
    schema_version: int
    tenant: str
    body: bytes
    tag: str
    budget: Budget
    outputs: tuple[StepOutput, ...] = ()


# -- sealing and opening ------------------------------------------------------------------------


def seal_checkpoint(
    cp: Checkpoint, key: bytes, outputs: tuple[StepOutput, ...] | list[StepOutput] = ()
) -> NewCheckpoint:
    body = cp.model_dump_json().encode()  # fields in schema order: one byte string per checkpoint
    return NewCheckpoint(
        sequence=cp.sequence,
        run_id=cp.lineage.run_id,
        state=cp.state,
        status=cp.status,
        status_reason=cp.status_reason,
        schema_version=cp.schema_version,
        tenant=cp.tenant,
        body=body,
        tag=seal(body, cp.tenant, key),
        budget=cp.budget,
        outputs=tuple(outputs),
    )


def open_checkpoint(stored: StoredCheckpoint, key: bytes, tenant: str) -> Checkpoint:
    if stored.tenant != tenant:
        raise WrongTenantError(
            f"checkpoint {stored.workflow_id}#{stored.sequence} belongs to tenant "
            f"{stored.tenant!r}, not {tenant!r}"
        )
    verify_seal(stored.body, stored.tenant, stored.tag, key)
    try:  # a current-schema body, parsed and validated in one pass
        cp = Checkpoint.model_validate_json(stored.body, strict=True)
    except ValidationError:  # an older schema to migrate, or a bad one: the slow, careful way
        doc = upgrade(parse_sealed(stored.body))
        try:
            cp = Checkpoint.model_validate_json(canonical_json(doc), strict=True)
        except ValidationError as exc:
            raise IntegrityError(
                f"checkpoint does not match schema v{SCHEMA_VERSION}: {first_error(exc)}"
            ) from exc
    if cp.tenant != tenant or cp.workflow_id != stored.workflow_id:
        raise IntegrityError("checkpoint body disagrees with its row (tenant or workflow id)")
    for field, body, row in (
        ("sequence", cp.sequence, stored.sequence),
        ("state", cp.state, stored.state),
        ("run id", cp.lineage.run_id, stored.run_id),
    ):
        if body != row:
            raise IntegrityError(f"checkpoint body disagrees with its row ({field})")
    return cp


def parse_sealed(body: bytes) -> dict[str, Any]:
    """A sealed body as a JSON object, read only after its seal was checked."""
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IntegrityError(f"sealed checkpoint is not JSON: {exc}") from exc
    except RecursionError:  # nested deeper than the parser follows: no writer of ours did that
        raise IntegrityError("sealed checkpoint is nested too deep to read") from None
    if not isinstance(doc, dict):
        raise IntegrityError("sealed checkpoint is not a JSON object")
    return doc


# -- older schemas: the entry to the migrations -------------------------------------------------


def upgrade(doc: Doc) -> Doc:
    """Run the chain of registered migrations up to the current schema version."""
    version = doc.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise IntegrityError("checkpoint has no integer schema_version")
    if version > SCHEMA_VERSION:
        raise IntegrityError(
            f"checkpoint schema v{version} is newer than this engine (v{SCHEMA_VERSION})"
        )
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise IntegrityError(f"no migration registered from checkpoint schema v{version}")
        try:  # a sealed old body missing a field or with one of the wrong type
            doc = step(doc)
        except ValidationError as exc:
            raise QuarantinedError(
                f"schema v{version} checkpoint does not match its schema: {first_error(exc)}"
            ) from exc
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            raise QuarantinedError(
                f"schema v{version} checkpoint cannot be migrated: {type(exc).__name__} {exc}"
            ) from exc
        version = doc["schema_version"]
    return doc


def first_error(exc: ValidationError) -> str:
    """A validation failure in one line: where, and what."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "(top level)"
    return f"{where}: {error['msg']}"
