"""Checkpoints of older schemas, written as an older engine wrote them."""

from __future__ import annotations

from typing import Any

from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.reference.checkpoint import Budget, NewCheckpoint
from killpoint.reference.integrity import canonical_json, seal
from killpoint.reference.migrations import v2_to_v3
from killpoint.reference.rows import WorkflowRecord
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY
from tests.support.flows import VERSIONS

KEY = TEST_KEY.encode()


def v1_doc(clock: FakeClock, **overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": 1,
        "workflow_id": "wf-old",
        "workflow_name": "pure",
        "owner_tenant": "default",
        "run_id": "wf-old:r1",
        "sequence": 1,
        "state": "start",
        "status": "running",
        "input": {"n": 1},
        "plan_version": "flows@1",
        "prompt_version": "writer@1",
        "limits": {"attempts": 10, "steps": 50, "cost": 100, "time_ms": 3_600_000},
        "spent": {"attempts": 2, "steps": 5, "cost": 7, "time_ms": 1000},
        "effects": [
            {
                "operation_id": "post/create_post",
                "intent": "create_post",
                "key": "kp-abc",
                "status": "committed",
                "receipt_id": "post_1",
            }
        ],
        "approved_by": "alice",
        "approval_gate": "pay",
        "approval_scope": "pay:pay",
        "approval_policy": "policy@1",
        "approval_expires_at": clock.now() + 600,
        "next_actions": ["plan"],
        "created_at": clock.now(),
    }
    doc.update(overrides)
    return {k: v for k, v in doc.items() if v is not None}


def v2_doc(clock: FakeClock, **overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": 2,
        "workflow_id": "wf-old",
        "workflow_name": "pure",
        "tenant": "default",
        "lineage": {"run_id": "wf-old:r1", "parent_run_id": None, "decision": "start"},
        "sequence": 1,
        "state": "start",
        "status": "running",
        "input": {"n": 1},
        "plan_version": "flows@1",
        "prompt_version": "writer@1",
        "artifacts": [],
        "effects": [],
        "approvals": [],
        "budget": {
            "attempts_left": 8,
            "steps_left": 45,
            "cost_left": 93,
            "time_left_ms": 3_599_000,
        },
        "next_actions": ["plan"],
        "outputs": {},
        "created_at": clock.now(),
    }
    doc.update(overrides)
    return {k: v for k, v in doc.items() if v is not None}


def v3_doc(clock: FakeClock, **overrides: Any) -> dict[str, Any]:
    """A v3 checkpoint of the publish flow, drafted: its step outputs are inline."""
    doc = v2_to_v3(
        v2_doc(
            clock,
            workflow_name="publish",
            state="drafted",
            input={"slug": "old-post", "title": "Old"},
            outputs={"draft": {"slug": "old-post", "title": "Old"}},
            next_actions=["create_post"],
        )
    )
    doc["versions"] = VERSIONS.model_dump()
    doc.update(overrides)
    return doc


def insert_old(store: Store, clock: FakeClock, doc: dict[str, Any]) -> None:
    """Insert an old-schema document as a sealed checkpoint row with its workflow row."""
    insert_sealed(
        store,
        clock,
        canonical_json(doc),
        workflow_id="wf-old",
        workflow_name=doc["workflow_name"],
        state=doc["state"],
        schema_version=doc["schema_version"],
    )


def insert_sealed(
    store: Store,
    clock: FakeClock,
    body: bytes,
    *,
    workflow_id: str,
    workflow_name: str,
    state: str,
    schema_version: int,
) -> None:
    """A workflow row and its checkpoint 1 holding `body`, sealed with the test key, whatever
    the body says."""
    record = WorkflowRecord(
        workflow_id=workflow_id,
        workflow_name=workflow_name,
        tenant="default",
        status=RunStatus.RUNNING,
        status_reason="",
        state=state,
        sequence=1,
        fencing_token=0,
        lease_owner=None,
        lease_expires_at=None,
        attempts_left=8,
        steps_left=45,
        cost_left=93,
        deadline=clock.now() + 3600,
        created_at=clock.now(),
        updated_at=clock.now(),
    )
    first = NewCheckpoint(
        sequence=1,
        run_id=f"{workflow_id}:r1",
        state=state,
        status=RunStatus.RUNNING,
        status_reason="",
        schema_version=schema_version,
        tenant="default",
        body=body,
        tag=seal(body, "default", KEY),
        budget=Budget(attempts_left=8, steps_left=45, cost_left=93, time_left_ms=3_599_000),
    )
    assert store.create_workflow(record, first)
