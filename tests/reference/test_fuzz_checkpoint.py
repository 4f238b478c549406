"""Hypothesis over the checkpoint loader: whatever a checkpoint row holds, opening it is an
`IntegrityError` (a `QuarantinedError` for an old schema that cannot migrate) and resuming from
it quarantines the run — never another exception, and never a step run or a request sent.

The bodies are arbitrary bytes, truncated bodies, bit flips under the seal and re-sealed, and
sealed bodies of every schema (v1 to v4) broken the ways `hostile_bodies` lists. Each input is
counted (`tests/support/fuzz.py`); the session's last lines say how many were tried.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
import sqlalchemy as sa
from hypothesis import example, given, reject
from hypothesis import strategies as st

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import RunStatus
from killpoint.fake_services import InProcessServices
from killpoint.reference.checkpoint import StoredCheckpoint, open_checkpoint
from killpoint.reference.errors import IntegrityError
from killpoint.reference.integrity import seal, sha256_hex
from killpoint.reference.store import Store
from killpoint.scenarios.adapters import adapters_for
from tests.support import fuzz
from tests.support import hostile_bodies as hb
from tests.support import hostile_json as hj
from tests.support.fixtures import TEST_KEY
from tests.support.flows import alter_rows, insert_row, make_engine
from tests.support.migrations import insert_sealed

KEY = TEST_KEY.encode()
CLOCK = FakeClock()
VERSIONS = st.sampled_from([1, 2, 3, 4])


def stored(body: bytes, tag: str | None = None, workflow_id: str = "wf-fuzz") -> StoredCheckpoint:
    return StoredCheckpoint(
        workflow_id=workflow_id,
        sequence=1,
        run_id=f"{workflow_id}:r1",
        state="drafted",
        schema_version=4,
        tenant="default",
        body=body,
        tag=seal(body, "default", KEY) if tag is None else tag,
        fencing_token=0,
        created_at=CLOCK.now(),
    )


def valid_body(version: int, **fields: Any) -> bytes:
    """A sealed-to-be body of schema `version`, with `fields` set as given."""
    return hj.encode({**hb.valid_doc(version, "wf-fuzz", CLOCK), **fields})


BUDGET = {"attempts_left": 8, "steps_left": 45, "cost_left": 93, "time_left_ms": 3_599_000}


# -- the envelope: open_checkpoint over sealed and unsealed bytes ------------------------------


@fuzz.scaled(4)
@given(body=st.binary(max_size=300), sealed=st.booleans())
def test_arbitrary_bytes_are_an_integrity_error(body: bytes, sealed: bool) -> None:
    fuzz.tried()
    with pytest.raises(IntegrityError):
        open_checkpoint(stored(body, None if sealed else "hmac-sha256:00"), KEY, "default")


@fuzz.scaled(2)
@given(version=VERSIONS, cut=st.floats(0, 1, exclude_max=True))
def test_a_truncated_sealed_body_is_an_integrity_error(version: int, cut: float) -> None:
    fuzz.tried()
    body = valid_body(version)
    with pytest.raises(IntegrityError):
        open_checkpoint(stored(body[: int(len(body) * cut)]), KEY, "default")


def flipped(body: bytes, at: float, bit: int) -> bytes:
    index = int(len(body) * at)
    return body[:index] + bytes([body[index] ^ (1 << bit)]) + body[index + 1 :]


@fuzz.scaled(2)
@given(version=VERSIONS, at=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7))
def test_a_bit_flip_under_the_seal_is_an_integrity_error(version: int, at: float, bit: int) -> None:
    fuzz.tried()
    body = valid_body(version)
    with pytest.raises(IntegrityError, match="integrity tag"):
        open_checkpoint(stored(flipped(body, at, bit), seal(body, "default", KEY)), KEY, "default")


@fuzz.scaled(2)
@given(version=VERSIONS, at=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7))
def test_a_resealed_bit_flip_opens_or_is_an_integrity_error(
    version: int, at: float, bit: int
) -> None:
    """A flip sealed again (a writer with the key) may still be a valid body: a digit of a
    budget, a letter of the input. Either it opens, or it is refused as an IntegrityError."""
    fuzz.tried()
    with contextlib.suppress(IntegrityError):
        open_checkpoint(stored(flipped(valid_body(version), at, bit)), KEY, "default")


@st.composite
def broken_bodies(draw: st.DrawFn, breakages: tuple[hj.Breakage, ...] = hb.BREAKAGES) -> bytes:
    return hj.encode(draw(hb.broken(draw(VERSIONS), breakages)))


@fuzz.scaled(2)
@given(body=broken_bodies())
# What the fuzzer found, each once accepted or a bare exception (RecursionError):
@example(body=valid_body(1, limits=hj.Deep(2000)))  # RecursionError in json.loads
@example(body=valid_body(1, zz_0=None))  # an unknown v1 field was dropped without a word
@example(body=valid_body(1, spent=0))  # a mistyped v1 spend read as none
@example(body=valid_body(2, sequence="1"))  # a number read from a string
@example(body=valid_body(4, budget={**BUDGET, "attempts_left": True}))  # a count from true
@example(body=valid_body(3, created_at=float("nan")))
@example(body=valid_body(1, approval_expires_at=float("inf")))  # an approval that never expires
@example(body=valid_body(4, budget={**BUDGET, "cost_left": 2**63}))  # beyond any column
@example(body=valid_body(2, budget={**BUDGET, "steps_left": -1}))  # a count below zero
@example(body=valid_body(3, state="done"))  # the body and its row disagree on the state
@example(body=valid_body(4, lineage={"run_id": "wf-fuzz:r9"}))  # … or on the run
@example(body=valid_body(1, schema_version=True))  # a literal matched by equality: true == 1
@example(body=valid_body(4, schema_version=4.0))
def test_a_broken_sealed_body_of_any_schema_is_an_integrity_error(body: bytes) -> None:
    fuzz.tried()
    with pytest.raises(IntegrityError):
        open_checkpoint(stored(body), KEY, "default")


# -- the store's row reader and Engine.resume on such a row ------------------------------------


class Resumes:
    """Rows put in a real store, and a fresh worker resuming each, watched: the boundaries it
    hit and the requests the services' journal saw."""

    def __init__(self, store: Store, services: InProcessServices, http: httpx.Client, root: Path):
        self.store, self.services, self.http, self.root = store, services, http, root

    def insert(self, body: bytes) -> str:
        """A workflow row and one checkpoint row holding `body`, sealed; its id."""
        workflow_id = "wf-" + uuid4().hex[:12]
        body = body.replace(b"wf-fuzz", workflow_id.encode())
        insert_sealed(
            self.store,
            CLOCK,
            body,
            workflow_id=workflow_id,
            workflow_name="publish",
            state="drafted",
            schema_version=4,
        )
        return workflow_id

    def resume(self, workflow_id: str) -> tuple[RunStatus | None, list[str], int]:
        """The outcome's status (None: a typed error), the boundaries hit, the new requests."""
        before = len(self.services.journal.requests())
        hits: list[str] = []
        worker = make_engine(
            self.store,
            CLOCK,
            self.root,
            adapters_for(self.http),
            hook=lambda boundary, step=None: hits.append(boundary),
        )
        try:
            status: RunStatus | None = worker.resume(workflow_id).status
        except KillpointError:
            status = None
        return status, hits, len(self.services.journal.requests()) - before

    def assert_refused(self, workflow_id: str) -> None:
        status, hits, requests = self.resume(workflow_id)
        assert status in (None, RunStatus.QUARANTINED), status
        assert b.STEP_BEGIN not in hits and requests == 0, (hits, requests)


@pytest.fixture
def resumes(
    store: Store,
    services: InProcessServices,
    http: httpx.Client,
    tmp_path: Path,
    checkpoint_key: bytes,
) -> Iterator[Resumes]:
    yield Resumes(store, services, http, tmp_path)


def test_an_unbroken_body_of_each_schema_resumes_and_posts(resumes: Resumes) -> None:
    """The watch can fail: the same rows, unbroken, run the post and hit its boundaries."""
    for version in (1, 2, 3, 4):
        status, hits, requests = resumes.resume(resumes.insert(valid_body(version)))
        assert status is RunStatus.COMPLETED, version
        assert b.STEP_BEGIN in hits and requests >= 1, version


@fuzz.scaled(1)
@given(body=broken_bodies((*hb.BREAKAGES, hb.other_workflow)))
@example(body=valid_body(1, workflow_name="pure"))  # ran the pure workflow's steps on it
@example(body=valid_body(4, budget={**BUDGET, "cost_left": 2**63}))
def test_resuming_a_broken_sealed_body_quarantines_and_runs_nothing(
    body: bytes, resumes: Resumes
) -> None:
    fuzz.tried()
    resumes.assert_refused(resumes.insert(body))


COLUMNS = ("body", "tag", "sequence", "tenant", "state", "run_id")
column_values = (
    st.text(max_size=12)
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.binary(max_size=12)
    | st.sampled_from(["not bytes", "default", "other", "drafted", "1"])
)


# SQLite alone: it keeps any type in any column, where PostgreSQL refuses the value on write.
@pytest.mark.parametrize("backend", ["sqlite"])
@fuzz.scaled(1)
@given(column=st.sampled_from(COLUMNS), value=column_values, version=VERSIONS)
@example(column="sequence", value="abc", version=4)  # a pydantic ValidationError
@example(column="tag", value="é", version=4)  # a TypeError from hmac.compare_digest
@example(column="state", value="", version=1)  # the row's state was never compared
def test_a_checkpoint_row_with_a_hostile_column_is_refused(
    column: str, value: Any, version: int, resumes: Resumes
) -> None:
    """A column edited behind the engine's back: reading the row is an IntegrityError or the row
    as stored, and the resume refuses it."""
    fuzz.tried()
    workflow_id = resumes.insert(valid_body(version))
    original = resumes.store.latest_checkpoint(workflow_id)
    try:
        alter_rows(resumes.store, "checkpoints", {column: value}, workflow_id=workflow_id)
    except (sa.exc.StatementError, OverflowError):
        reject()  # the database refused the value: there is nothing hostile to read
    try:
        if resumes.store.latest_checkpoint(workflow_id) == original:
            reject()  # the value was the stored one, or the database coerced it back
    except IntegrityError:
        pass
    resumes.assert_refused(workflow_id)


output_values = (
    st.text(max_size=12)
    | st.sampled_from(["{", "null", '"x"', "[1,2]"])
    | st.integers(300, 3000).map(lambda depth: "[" * depth + "]" * depth)
    | st.integers()
    | st.binary(max_size=8)
)


@pytest.mark.parametrize("backend", ["sqlite"])  # as above: bytes in a text column, say
@fuzz.scaled(1)
@given(value=output_values, hashed=st.booleans(), step=st.sampled_from(["draft", "x", ""]))
@example(value="{", hashed=True, step="draft")  # a JSONDecodeError before the chain was checked
@example(value="[" * 3000 + "]" * 3000, hashed=True, step="draft")  # a RecursionError, likewise
@example(value=b"\x00", hashed=False, step="draft")  # an AttributeError (SQLite keeps bytes)
def test_a_forged_output_row_is_refused(
    value: Any, hashed: bool, step: str, resumes: Resumes
) -> None:
    """An output row the engine never wrote, under a checkpoint whose sealed chain pins none:
    refused on resume, whatever the row holds and whether or not its hash fits its value."""
    fuzz.tried()
    since_start = {"since": 0, "count": 0, "digest": ""}
    workflow_id = resumes.insert(valid_body(4, outputs_ref=since_start))
    sha = sha256_hex(value.encode()) if hashed and isinstance(value, str) else "0" * 64
    row = {"workflow_id": workflow_id, "sequence": 1, "step": step, "value": value, "sha256": sha}
    try:
        insert_row(resumes.store, "outputs", row)
    except (sa.exc.StatementError, OverflowError):
        reject()  # the database refused the value
    resumes.assert_refused(workflow_id)
