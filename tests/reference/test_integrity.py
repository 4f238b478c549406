"""The seal: a tampered, wrong-tenant or unsupported checkpoint, or an altered output row it
pins, is rejected before it is used."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.harness.engines.reference import StoreReader
from killpoint.harness.run.killswitch import Killed
from killpoint.reference.checkpoint import (
    StoredCheckpoint,
    open_checkpoint,
    parse_sealed,
    seal_checkpoint,
)
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import (
    IntegrityError,
    SecretMissingError,
    WeakKeyError,
    WrongTenantError,
)
from killpoint.reference.integrity import (
    MIN_KEY_BYTES,
    SecretRef,
    canonical_json,
    check_key,
    input_hash,
    seal,
    sha256_hex,
    verify_seal,
)
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY
from tests.support.flows import alter_rows, insert_row, kill_at, make_engine
from tests.support.seals import flip_one_byte

KEY = TEST_KEY.encode()


def _stored(store: Store, workflow_id: str = "wf-1") -> StoredCheckpoint:
    stored = store.latest_checkpoint(workflow_id)
    assert stored is not None
    return stored


def test_canonical_json_is_one_byte_string_per_value() -> None:
    assert canonical_json({"b": 1, "a": [1, "é"]}) == canonical_json({"a": [1, "é"], "b": 1})
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()
    assert input_hash({"x": 1}).startswith("sha256:")


def test_seal_binds_the_tenant_and_the_key() -> None:
    tag = seal(b"{}", "acme", KEY)
    verify_seal(b"{}", "acme", tag, KEY)
    for body, tenant, key in ((b"{ }", "acme", KEY), (b"{}", "other", KEY), (b"{}", "acme", b"k")):
        with pytest.raises(IntegrityError):
            verify_seal(body, tenant, tag, key)


@pytest.mark.parametrize(
    "cut",
    [
        lambda tag: "",
        lambda tag: "hmac-sha256:",
        lambda tag: tag[:-1],
        lambda tag: tag[: len("hmac-sha256:") + 8],
        lambda tag: tag + "0",
        lambda tag: tag.upper(),
    ],
    ids=["empty", "scheme only", "one digit short", "truncated", "one digit more", "case"],
)
def test_a_tag_of_any_other_length_or_spelling_is_rejected(cut: Callable[[str], str]) -> None:
    """Only the whole tag, byte for byte: a check that accepts a prefix or an empty tag lets
    anyone who can edit a row seal it."""
    tag = seal(b"{}", "acme", KEY)
    with pytest.raises(IntegrityError):
        verify_seal(b"{}", "acme", cut(tag), KEY)


def test_secret_is_a_reference_resolved_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KP_TEST_SECRET", raising=False)
    with pytest.raises(SecretMissingError, match=r"\$KP_TEST_SECRET is not set"):
        SecretRef("KP_TEST_SECRET").resolve()
    monkeypatch.setenv("KP_TEST_SECRET", "s3cret-of-at-least-thirty-two-bytes")
    assert SecretRef("KP_TEST_SECRET").resolve() == b"s3cret-of-at-least-thirty-two-bytes"


def test_the_key_is_never_stored(engine: Engine, store: Store) -> None:
    engine.run("pure", "wf-1", {"n": 1})
    for row in store.checkpoints("wf-1"):
        assert KEY not in row.body
        cp = open_checkpoint(row, KEY, "default")
        assert cp.secret_refs == ("KILLPOINT_CHECKPOINT_KEY",)


def test_a_sealed_checkpoint_round_trips(engine: Engine, store: Store) -> None:
    engine.start("pure", "wf-1", {"n": 1})
    cp = open_checkpoint(_stored(store), KEY, "default")
    assert seal_checkpoint(cp, KEY).body == _stored(store).body


def test_one_changed_byte_is_rejected_and_no_step_runs(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    engine.start("pure", "wf-1", {"n": 1})
    flip_one_byte(store, "wf-1", 1)
    with pytest.raises(IntegrityError, match="integrity tag does not match"):
        open_checkpoint(_stored(store), KEY, "default")

    outcome = engine.resume("wf-1")

    assert outcome.status is RunStatus.QUARANTINED
    assert "integrity tag" in outcome.reason
    assert [c.sequence for c in store.checkpoints("wf-1")] == [1]
    record = store.workflow("wf-1")
    assert (record.status, record.lease_owner, record.fencing_token) == (
        RunStatus.QUARANTINED,
        None,
        0,
    )


def test_a_changed_tag_is_rejected(engine: Engine, store: Store) -> None:
    engine.start("pure", "wf-1", {"n": 1})
    assert alter_rows(store, "checkpoints", {"tag": "hmac-sha256:" + "0" * 64}) == 1
    assert engine.resume("wf-1").status is RunStatus.QUARANTINED


def test_a_wrong_key_is_rejected(
    engine: Engine, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.start("pure", "wf-1", {"n": 1})
    monkeypatch.setenv("KILLPOINT_CHECKPOINT_KEY", "another-key-of-at-least-32-bytes!")
    outcome = engine.resume("wf-1")
    assert outcome.status is RunStatus.QUARANTINED
    assert store.workflow("wf-1").sequence == 1


def test_a_wrong_tenant_checkpoint_is_rejected(
    engine: Engine, store: Store, clock: FakeClock, tmp_path: Path
) -> None:
    engine.start("pure", "wf-1", {"n": 1})
    with pytest.raises(IntegrityError, match="belongs to tenant 'default', not 'acme'"):
        open_checkpoint(_stored(store), KEY, "acme")

    intruder = make_engine(store, clock, tmp_path, tenant="acme")
    with pytest.raises(WrongTenantError, match="does not belong to tenant 'acme'"):
        intruder.resume("wf-1")

    assert [c.sequence for c in store.checkpoints("wf-1")] == [1]
    # the intruder refused the run without marking it: it is the owner's, and still running
    assert store.workflow("wf-1").status is RunStatus.RUNNING
    assert engine.resume("wf-1").status is RunStatus.COMPLETED


def test_a_checkpoint_copied_to_another_tenant_row_fails_its_seal(
    engine: Engine, store: Store
) -> None:
    """Relabelling the row's tenant column does not move the checkpoint: the tag binds it."""
    engine.start("pure", "wf-1", {"n": 1})
    assert alter_rows(store, "checkpoints", {"tenant": "acme"}) == 1
    with pytest.raises(IntegrityError, match="integrity tag"):
        open_checkpoint(_stored(store), KEY, "acme")


def test_a_body_that_disagrees_with_its_row_is_rejected(engine: Engine, store: Store) -> None:
    engine.start("pure", "wf-1", {"n": 1})
    stored = _stored(store)
    moved = stored.model_copy(update={"workflow_id": "wf-2"})
    with pytest.raises(IntegrityError, match="disagrees with its row"):
        open_checkpoint(moved, KEY, "default")


def _outputs_table(store: Store, **values: object) -> None:
    assert alter_rows(store, "outputs", values, step="plan") == 1


def test_the_checkpoint_pins_its_step_outputs_without_carrying_them(
    engine: Engine, store: Store
) -> None:
    engine.run("pure", "wf-1", {"n": 1})
    final = open_checkpoint(_stored(store), KEY, "default")
    assert final.outputs == {}
    assert [(o.sequence, o.step, o.value) for o in store.outputs("wf-1")] == [
        (2, "plan", "1"),
        (3, "finish", "2"),
    ]
    assert (final.outputs_ref.since, final.outputs_ref.count) == (0, 2)
    assert engine.load_outputs(final) == {"plan": 1, "finish": 2}


@pytest.mark.parametrize(
    ("alteration", "reason"),
    [
        ({"value": "7"}, "does not match its hash"),
        ({"value": "7", "sha256": sha256_hex(b"7")}, "disagree with checkpoint"),  # rehashed
    ],
)
def test_an_altered_output_row_is_rejected_and_no_step_runs(
    alteration: dict[str, object],
    reason: str,
    store: Store,
    clock: FakeClock,
    tmp_path: Path,
    checkpoint_key: bytes,
) -> None:
    with pytest.raises(Killed):
        make_engine(
            store, clock, tmp_path, hook=kill_at(clock, b.CHECKPOINT_COMMITTED, "plan")
        ).run("pure", "wf-1", {"n": 1})
    _outputs_table(store, **alteration)
    clock.advance(31)

    outcome = make_engine(store, clock, tmp_path).resume("wf-1")

    assert outcome.status is RunStatus.QUARANTINED
    assert reason in outcome.reason
    assert [c.sequence for c in store.checkpoints("wf-1")] == [1, 2]


def test_a_forged_output_row_beyond_the_checkpoint_is_rejected(
    engine: Engine, store: Store
) -> None:
    engine.start("pure", "wf-1", {"n": 1})
    forged = {"workflow_id": "wf-1", "sequence": 2, "step": "plan", "value": "9"}
    insert_row(store, "outputs", {**forged, "sha256": sha256_hex(b"9")})

    outcome = engine.resume("wf-1")

    assert outcome.status is RunStatus.QUARANTINED
    assert "beyond checkpoint #1" in outcome.reason


def test_a_checkpoints_stored_size_counts_the_output_rows_it_committed(
    engine: Engine, store: Store
) -> None:
    """Storage growth is measured from these sizes: outputs moved out of the checkpoint must
    not vanish from the figure."""
    engine.run("pure", "wf-1", {"n": 1})
    views = {v.sequence: v for v in StoreReader(store, "default").checkpoints("wf-1")}
    rows = {r.sequence: r for r in store.checkpoints("wf-1")}
    plan = next(o for o in store.outputs("wf-1") if o.step == "plan")
    assert views[1].size == len(rows[1].body) + len(rows[1].tag)  # the start: no output
    output = len(plan.step) + len(plan.value) + len(plan.sha256)
    assert views[2].size == len(rows[2].body) + len(rows[2].tag) + output


def test_a_key_as_long_as_the_tag_is_strong_enough_and_one_byte_less_is_not() -> None:
    """HMAC-SHA256's output is 32 bytes: the bound is exactly that, neither side of it."""
    assert MIN_KEY_BYTES == 32
    check_key(b"k" * 32)
    with pytest.raises(WeakKeyError, match="holds a 31-byte key"):
        check_key(b"k" * 31)


def test_a_weak_key_is_refused_on_resolve_unless_the_reference_allows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KP_SHORT_KEY", "short")
    with pytest.raises(WeakKeyError):
        SecretRef(env="KP_SHORT_KEY").resolve()
    assert SecretRef(env="KP_SHORT_KEY", allow_weak=True).resolve() == b"short"


def test_a_secret_reference_is_a_value_that_cannot_be_repointed() -> None:
    """Resolved again on every resume: it must not be edited between two resolutions."""
    ref = SecretRef()
    with pytest.raises(AttributeError):
        ref.env = "OTHER"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"a": "\xc3"}', "not JSON"),  # invalid UTF-8
        (b"[" * 100_000, "nested too deep"),
        (b"[1, 2]", "not a JSON object"),
    ],
)
def test_a_sealed_body_that_is_no_json_object_is_an_integrity_error(body: bytes, why: str) -> None:
    """Each way a body can fail to be a checkpoint's object is the one typed error."""
    with pytest.raises(IntegrityError, match=why):
        parse_sealed(body)


def test_a_sealed_json_object_is_read_back_as_it_was_written() -> None:
    assert parse_sealed(canonical_json({"sequence": 1})) == {"sequence": 1}
