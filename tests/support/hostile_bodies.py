"""Checkpoint bodies of every schema (v1 to v4), what each schema allows, and the strategies
that break them (`tests.support.hostile_json`), plus the one breakage only a checkpoint has: a body
that disagrees with its row about who it is.

Each valid body is the publish flow parked at `drafted`: resumed, it posts to the cms, so a
body that is wrongly accepted shows up as a request in the services' journal.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hypothesis import strategies as st

from killpoint.contract.clock import FakeClock
from killpoint.contract.records import EffectStatus, RunStatus
from killpoint.reference._schema import INT32, INT64
from killpoint.reference.checkpoint import Budget, Checkpoint, Lineage, OutputsRef
from tests.support import hostile_json as hj
from tests.support.flows import VERSIONS
from tests.support.migrations import v1_doc, v2_doc, v3_doc

Doc = dict[str, Any]

DRAFT = {"slug": "old-post", "title": "Old"}


def valid_doc(version: int, workflow_id: str, clock: FakeClock) -> Doc:
    """A body of schema `version` for `workflow_id`, parked before the cms post."""
    publish = {
        "workflow_id": workflow_id,
        "workflow_name": "publish",
        "state": "drafted",
        "input": dict(DRAFT),
        "outputs": {"draft": dict(DRAFT)},
        "next_actions": ["create_post"],
    }
    if version == 1:
        return v1_doc(clock, **publish, run_id=f"{workflow_id}:r1")
    if version == 2:
        return v2_doc(clock, **publish, lineage={"run_id": f"{workflow_id}:r1"})
    if version == 3:
        return v3_doc(clock, workflow_id=workflow_id, lineage={"run_id": f"{workflow_id}:r1"})
    cp = Checkpoint(
        workflow_id=workflow_id,
        workflow_name="publish",
        tenant="default",
        lineage=Lineage(run_id=f"{workflow_id}:r1"),
        sequence=1,
        state="drafted",
        status="running",
        input=dict(DRAFT),
        input_hash="sha256:x",
        versions=VERSIONS,
        budget=Budget(attempts_left=8, steps_left=45, cost_left=93, time_left_ms=3_599_000),
        next_actions=("create_post",),
        outputs_ref=OutputsRef(since=1),
        outputs={"draft": dict(DRAFT)},
        created_at=clock.now(),
    )
    doc: Doc = json.loads(cp.model_dump_json())
    return doc


# -- what each schema allows --------------------------------------------------------------------

# Fields a body may lack (a default, or nothing to migrate); every other one is required.
OPTIONAL: dict[int, tuple[str, ...]] = {
    1: ("spent", "spent.*", "artifacts", "effects", "effects.*.receipt_id", "approved_by",
        "next_actions", "outputs"),
    2: ("lineage.parent_run_id", "lineage.decision", "artifacts", "effects",
        "effects.*.receipt_id", "next_actions", "outputs"),
    3: ("lineage.parent_run_id", "lineage.decision", "artifacts", "effects", "approvals",
        "effects.*.receipt_id", "pending", "next_actions", "outputs", "status_reason"),
    4: ("schema_version", "lineage.parent_run_id", "lineage.decision", "artifacts", "effects",
        "effects.*.receipt_id", "approvals", "pending", "next_actions", "outputs",
        "outputs_ref.count", "outputs_ref.digest", "secret_refs", "status_reason"),
}  # fmt: skip
COUNT = (0, INT32)  # never negative, and held in an INTEGER column
MILLIS = (0, INT64)
SHAPES = {
    version: hj.Shape(
        free=("input", "outputs"),
        optional=optional,
        nullable={
            "lineage.parent_run_id": "str",
            "effects.*.receipt_id": "str",
            "approved_by": "str",
        },
        bounds={
            "sequence": (1, INT32),
            "limits.time_ms": MILLIS,
            "spent.time_ms": MILLIS,
            "limits.*": COUNT,
            "spent.*": COUNT,
            "budget.attempts_left": COUNT,
            "budget.steps_left": COUNT,
            "budget.cost_left": (-INT32, INT32),
            "outputs_ref.*": COUNT,
        },
        enums={
            "status": frozenset(RunStatus),
            "effects.*.status": frozenset(EffectStatus),
            "lineage.decision": frozenset({"start", "continue", "branch", "restart"}),
            "pending.*.kind": frozenset({"approval", "reconcile", "review", "handoff", "verify"}),
        },
    )
    for version, optional in OPTIONAL.items()
}
# What a body says about who it is, which its row says too.
IDENTITY = ("workflow_id", "state", "sequence", "tenant", "owner_tenant", "run_id",
            "lineage.run_id")  # fmt: skip


def other_identity(doc: Doc, shape: hj.Shape) -> st.SearchStrategy[hj.Change]:
    """A body that says it is another workflow, state, sequence, tenant or run than its row."""
    own = [(p, v) for p, v in hj.nodes(doc, shape) if hj.matches(p, IDENTITY)]

    def other(pv: tuple[hj.Path, Any]) -> st.SearchStrategy[hj.Change]:
        path, value = pv
        values: st.SearchStrategy[Any] = (
            st.integers(1, INT32)
            if isinstance(value, int)
            else st.sampled_from(["pure", "pay", "start", "done", "other"]) | st.text(max_size=8)
        )
        return hj.setting(path, values.filter(lambda v: v != value))

    return st.sampled_from(own).flatmap(other)


def other_workflow(doc: Doc, shape: hj.Shape) -> st.SearchStrategy[hj.Change]:
    """A body naming another of the engine's workflows than its workflow row does: only the
    resume, which reads that row, can tell."""
    return hj.setting(("workflow_name",), st.sampled_from(["pure", "pay", "notify", "artifact"]))


BREAKAGES: tuple[hj.Breakage, ...] = (*hj.BREAKAGES, other_identity)


@cache
def broken(version: int, breakages: tuple[hj.Breakage, ...] = BREAKAGES) -> st.SearchStrategy[Doc]:
    """A valid body of schema `version`, broken one to three ways its schema forbids (built
    once per schema: it walks the body)."""
    return hj.broken(valid_doc(version, "wf-fuzz", FakeClock()), SHAPES[version], breakages)
