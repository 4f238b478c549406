"""Old-schema checkpoints migrate through the chain; one missing a security field is quarantined.

The v1, v2 and v3 documents below are what older engines wrote: sealed with the key and inserted
as rows, exactly as they would sit in a database that outlived a deployment.
"""

from __future__ import annotations

from typing import Any

import pytest

from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.harness.engines.reference import StoreReader
from killpoint.reference.checkpoint import (
    SCHEMA_VERSION,
    Budget,
    Checkpoint,
    open_checkpoint,
    upgrade,
)
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import IntegrityError, QuarantinedError
from killpoint.reference.integrity import input_hash
from killpoint.reference.migrations import UNRECORDED
from killpoint.reference.store import Store
from killpoint.reference.tamper import as_v1
from tests.support.migrations import KEY, insert_old, v1_doc, v2_doc, v3_doc


def test_v1_migrates_through_v2_to_the_current_schema(clock: FakeClock) -> None:
    cp = Checkpoint.model_validate(upgrade(v1_doc(clock)))
    assert cp.schema_version == SCHEMA_VERSION
    assert cp.tenant == "default"
    assert cp.budget == Budget(attempts_left=8, steps_left=45, cost_left=93, time_left_ms=3_599_000)
    assert [(a.gate, a.actor, a.expires_at) for a in cp.approvals] == [
        ("pay", "alice", clock.now() + 600)
    ]
    assert cp.effects[0].idempotency_key == "kp-abc"
    assert cp.versions.model_contract == UNRECORDED == cp.versions.tool_schema
    assert cp.input_hash == input_hash({"n": 1})


def test_v2_waiting_for_approval_migrates_with_its_pending_work(clock: FakeClock) -> None:
    cp = Checkpoint.model_validate(upgrade(v2_doc(clock, status="waiting_approval")))
    assert [(p.kind, p.ref) for p in cp.pending] == [("approval", "start")]


@pytest.mark.parametrize("make_doc", [v1_doc, v2_doc])
def test_an_old_schema_row_migrates_and_the_run_resumes(
    make_doc: Any, engine: Engine, store: Store, clock: FakeClock
) -> None:
    insert_old(store, clock, make_doc(clock))
    cp = open_checkpoint(store.checkpoints("wf-old")[0], KEY, "default")
    assert cp.schema_version == SCHEMA_VERSION

    outcome = engine.resume("wf-old")

    assert outcome.status is RunStatus.COMPLETED
    rows = store.checkpoints("wf-old")
    assert [r.schema_version for r in rows] == [make_doc(clock)["schema_version"]] + [
        SCHEMA_VERSION
    ] * (len(rows) - 1)
    # The unrecorded versions are a version change: the policy's decision is recorded.
    second = open_checkpoint(rows[1], KEY, "default")
    assert second.lineage.parent_run_id == "wf-old:r1"
    assert second.lineage.decision == "restart"


def test_a_v3_checkpoint_keeps_its_inline_outputs_and_later_ones_go_to_rows(
    new_worker: Any, store: Store, clock: FakeClock
) -> None:
    insert_old(store, clock, v3_doc(clock))

    outcome = new_worker().resume("wf-old")

    assert outcome.status is RunStatus.COMPLETED
    [post] = [e for e in store.effects("wf-old") if e.step == "create_post"]
    assert post.args["slug"] == "old-post"  # the step read the draft kept inline
    final = StoreReader(store, "default").checkpoints("wf-old")[-1]
    assert final.outputs == {"draft": {"slug": "old-post", "title": "Old"}}
    assert store.outputs("wf-old") == []  # nothing was copied out of the old checkpoint


SECURITY_GAPS = [
    (v1_doc, {"owner_tenant": None}, "owner_tenant"),
    (v1_doc, {"limits": None}, "limits"),
    (v1_doc, {"approval_expires_at": None}, "approval_expires_at"),
    (v2_doc, {"tenant": None}, "tenant"),
    (v2_doc, {"budget": None}, "budget"),
    (v2_doc, {"approvals": None}, "approvals"),
]


@pytest.mark.parametrize(("make_doc", "gap", "field"), SECURITY_GAPS)
def test_a_missing_security_field_is_quarantined_not_defaulted(
    make_doc: Any, gap: dict[str, Any], field: str, clock: FakeClock
) -> None:
    with pytest.raises(QuarantinedError, match=f"no '{field}'"):
        upgrade(make_doc(clock, **gap))


@pytest.mark.parametrize(("make_doc", "gap", "field"), SECURITY_GAPS[::2])
def test_a_stored_checkpoint_missing_a_security_field_quarantines_the_run(
    make_doc: Any,
    gap: dict[str, Any],
    field: str,
    engine: Engine,
    store: Store,
    clock: FakeClock,
) -> None:
    insert_old(store, clock, make_doc(clock, **gap))

    outcome = engine.resume("wf-old")

    assert outcome.status is RunStatus.QUARANTINED
    assert field in outcome.reason
    assert store.workflow("wf-old").status is RunStatus.QUARANTINED
    assert len(store.checkpoints("wf-old")) == 1


@pytest.mark.parametrize(
    ("version", "message"),
    [(SCHEMA_VERSION + 1, "newer than this engine"), (0, "no migration"), ("3", "integer")],
)
def test_unsupported_schema_versions_are_rejected(
    version: Any, message: str, clock: FakeClock
) -> None:
    with pytest.raises(IntegrityError, match=message):
        upgrade(v2_doc(clock, schema_version=version))


def test_the_partly_spent_v1_fixture_migrates_back_to_the_budget_it_was_made_from(
    clock: FakeClock,
) -> None:
    """The `legacy_v1` tampering writes a current checkpoint as v1 did, limits and spend apart
    (limits from the run's first checkpoint): migrating it gives back the budget left and the
    approval's own expiry, where reading its limits as the budget left would not."""
    current = upgrade(v1_doc(clock))
    limits = {"attempts_left": 10, "steps_left": 50, "cost_left": 100, "time_left_ms": 3_600_000}
    old = as_v1(current, tenant="default", approval=True, limits=limits)
    assert old["limits"] == {"attempts": 10, "steps": 50, "cost": 100, "time_ms": 3_600_000}
    assert old["spent"] == {"attempts": 2, "steps": 5, "cost": 7, "time_ms": 1000}
    migrated = upgrade(old)
    assert migrated["budget"] == current["budget"]
    assert migrated["approvals"][0]["expires_at"] == clock.now() + 600
    flat = as_v1(current, tenant="default")  # the older fixtures: limits equal to what is left
    assert flat["spent"] == {} and upgrade(flat)["budget"] == current["budget"]
