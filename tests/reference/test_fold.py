"""The checkpoint fold, property by property, over generated checkpoints and changes.

Each property is a function that raises `AssertionError` when a folded checkpoint breaks it;
the generated test holds the reference fold to all of them, and a hand-built wrong checkpoint
shows each one can fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue

from killpoint.contract.records import (
    ArtifactRef,
    EffectRecord,
    EffectStatus,
    RunStatus,
    Versions,
)
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.reference.checkpoint import (
    Budget,
    Checkpoint,
    EffectRef,
    Lineage,
    OutputsRef,
    StepOutput,
)
from killpoint.reference.fold import SETTLED, Change, fold
from killpoint.reference.integrity import output_link, sha256_hex

WORKFLOW = Workflow(
    name="fold",
    plan_version="fold@1",
    states=("start", "middle", "done", "refunded"),
    initial="start",
    terminal={"done": RunStatus.COMPLETED, "refunded": RunStatus.COMPENSATED},
    transitions=(
        Transition("start", "middle", Step("plan", StepKind.PURE, compute=lambda c: 1)),
        Transition(
            "middle",
            "done",
            Step("finish", StepKind.PURE, compute=lambda c: 2),
            on_failure="refunded",
        ),
    ),
)
VERSIONS = Versions(plan="fold@1", prompt="p@1", model_contract="m@1", tool_schema="t@1")
LIVE = (RunStatus.RUNNING, RunStatus.WAITING_APPROVAL)

names = st.sampled_from(["a", "b", "c", "d"])
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
hashes = st.text("0123456789abcdef", min_size=64, max_size=64)
digests = st.just("") | hashes


def artifacts() -> st.SearchStrategy[ArtifactRef]:
    return st.builds(
        ArtifactRef,
        uri=st.just("artifact:x"),
        sha256=hashes,
        media_type=st.just("text/plain"),
        produced_by=names,
    )


@st.composite
def effect_refs(draw: st.DrawFn) -> EffectRef:
    op = draw(names)
    return EffectRef(
        operation_id=f"s/{op}",
        intent=op,
        idempotency_key=f"kp-{op}",
        status=draw(st.sampled_from(EffectStatus)),
    )


@st.composite
def effect_records(draw: st.DrawFn) -> EffectRecord:
    op = draw(names)
    return EffectRecord(
        workflow_id="wf-1",
        operation_id=f"s/{op}",
        step="s",
        service="svc",
        intent=op,
        idempotency_key=f"kp-{op}",
        status=draw(st.sampled_from(EffectStatus)),
    )


@st.composite
def checkpoints(draw: st.DrawFn) -> Checkpoint:
    sequence = draw(st.integers(1, 10_000))
    return Checkpoint(
        workflow_id="wf-1",
        workflow_name=WORKFLOW.name,
        tenant="default",
        lineage=Lineage(run_id="wf-1:r1"),
        sequence=sequence,
        state=draw(st.sampled_from(["start", "middle"])),
        status=draw(st.sampled_from(LIVE)),
        input={"n": 1},
        input_hash="sha256:x",
        versions=VERSIONS,
        artifacts=tuple({a.produced_by: a for a in draw(st.lists(artifacts()))}.values()),
        effects=tuple({r.operation_id: r for r in draw(st.lists(effect_refs()))}.values()),
        budget=Budget(
            attempts_left=draw(st.integers(0, 20)),
            steps_left=draw(st.integers(0, 200)),
            cost_left=draw(st.integers(0, 1000)),
            time_left_ms=draw(st.integers(0, 10**8)),
        ),
        outputs_ref=OutputsRef(
            since=draw(st.integers(0, sequence - 1)),
            count=draw(st.integers(0, 50)),
            digest=draw(digests),
        ),
        outputs=draw(st.dictionaries(names, json_values, max_size=2)),
        created_at=draw(st.floats(0, 10**6)),
    )


changes = st.builds(
    Change,
    state=st.sampled_from(WORKFLOW.states),
    status=st.sampled_from(RunStatus),
    reason=st.text(max_size=5),
    outputs=st.dictionaries(names, json_values, max_size=3),
    artifacts=st.lists(artifacts()).map(lambda refs: {a.produced_by: a for a in refs}),
    effects=st.lists(effect_records(), max_size=3),
    reset=st.booleans(),
).filter(lambda c: c.status is not RunStatus.WAITING_APPROVAL or c.state not in WORKFLOW.terminal)


@dataclass(frozen=True)
class Folded:
    """One fold: what went in and what came out."""

    cp: Checkpoint
    change: Change
    step: Step | None
    new: Checkpoint
    rows: tuple[StepOutput, ...]


@st.composite
def folds(draw: st.DrawFn) -> Folded:
    cp = draw(checkpoints())
    change = draw(changes)
    transition = WORKFLOW.transition_from(cp.state)
    assert transition is not None
    step = draw(st.none() | st.just(transition.step))
    now = cp.created_at + draw(st.floats(0, 10**5))
    attempts_left = draw(st.integers(0, cp.budget.attempts_left))
    new, rows = fold(cp, change, step, WORKFLOW, now, attempts_left)
    return Folded(cp, change, step, new, rows)


# -- the properties -----------------------------------------------------------------------------


def sequence_is_next(f: Folded) -> None:
    assert f.new.sequence == f.cp.sequence + 1


def budgets_never_grow(f: Folded) -> None:
    before, after = f.cp.budget, f.new.budget
    for name in ("attempts_left", "steps_left", "cost_left", "time_left_ms"):
        assert getattr(after, name) <= getattr(before, name), name
    spent = 0 if f.step is None else 1
    assert before.steps_left - after.steps_left == spent


def outputs_digest_chains_exactly_its_rows(f: Folded) -> None:
    base = OutputsRef(since=f.new.sequence) if f.change.reset else f.cp.outputs_ref
    digest = base.digest
    for row in f.rows:
        assert row.sequence == f.new.sequence
        assert sha256_hex(row.value.encode()) == row.sha256
        digest = output_link(digest, row.sequence, row.step, row.sha256)
    assert [r.step for r in f.rows] == list(f.change.outputs)
    assert f.new.outputs_ref.digest == digest
    assert f.new.outputs_ref.count == base.count + len(f.rows)


def a_reset_starts_outputs_and_artifacts_over(f: Folded) -> None:
    if f.change.reset:
        assert f.new.outputs_ref.since == f.new.sequence
        assert f.new.outputs == {}
        assert f.new.artifacts == tuple(f.change.artifacts.values())
    else:
        assert f.new.outputs_ref.since == f.cp.outputs_ref.since
        assert f.new.outputs == f.cp.outputs
        kept = {a.produced_by: a for a in f.cp.artifacts}
        assert {a.produced_by: a for a in f.new.artifacts} == {**kept, **f.change.artifacts}


def settled_effects_leave_the_refs(f: Folded) -> None:
    recorded = {r.operation_id for r in f.change.effects}
    for ref in f.new.effects:
        assert ref.status not in SETTLED or ref.operation_id in recorded, ref
    for ref in f.cp.effects:
        if ref.status not in SETTLED and ref.operation_id not in recorded:
            assert ref in f.new.effects, ref


def next_actions_follow_the_status(f: Folded) -> None:
    if f.new.status.terminal:
        assert f.new.next_actions == ()
    else:
        transition = WORKFLOW.transition_from(f.new.state)
        assert transition is not None
        assert f.new.next_actions == (transition.step.name,)


PROPERTIES: list[Callable[[Folded], None]] = [
    sequence_is_next,
    budgets_never_grow,
    outputs_digest_chains_exactly_its_rows,
    a_reset_starts_outputs_and_artifacts_over,
    settled_effects_leave_the_refs,
    next_actions_follow_the_status,
]


@given(folds())
def test_the_fold_keeps_every_property(f: Folded) -> None:
    for prop in PROPERTIES:
        prop(f)


@given(folds())
def test_a_running_change_into_a_terminal_state_takes_its_terminal_status(f: Folded) -> None:
    if f.change.status is RunStatus.RUNNING and f.change.state in WORKFLOW.terminal:
        assert f.new.status is WORKFLOW.terminal[f.change.state]
    else:
        assert f.new.status is f.change.status


# -- each property can fail: a hand-built wrong fold of one small checkpoint --------------------


def _one() -> Folded:
    cp = Checkpoint(
        workflow_id="wf-1",
        workflow_name=WORKFLOW.name,
        tenant="default",
        lineage=Lineage(run_id="wf-1:r1"),
        sequence=3,
        state="start",
        status=RunStatus.RUNNING,
        input={},
        input_hash="sha256:x",
        versions=VERSIONS,
        artifacts=(ArtifactRef(uri="u", sha256="a" * 64, media_type="t", produced_by="a"),),
        effects=(
            EffectRef(operation_id="s/a", intent="a", idempotency_key="k", status="verified"),
        ),
        budget=Budget(attempts_left=5, steps_left=5, cost_left=5, time_left_ms=5000),
        outputs_ref=OutputsRef(since=0, count=1, digest="0" * 64),
        created_at=100.0,
    )
    change = Change("middle", outputs={"plan": 1}, reset=True)
    step = WORKFLOW.step("plan")
    new, rows = fold(cp, change, step, WORKFLOW, 101.0, 5)
    return Folded(cp, change, step, new, rows)


def _broken(f: Folded, **update: object) -> Folded:
    return Folded(f.cp, f.change, f.step, f.new.model_copy(update=update), f.rows)


WRONG: dict[Callable[[Folded], None], Callable[[Folded], Folded]] = {
    sequence_is_next: lambda f: _broken(f, sequence=f.cp.sequence),
    budgets_never_grow: lambda f: _broken(
        f, budget=f.new.budget.model_copy(update={"cost_left": f.cp.budget.cost_left + 1})
    ),
    outputs_digest_chains_exactly_its_rows: lambda f: Folded(f.cp, f.change, f.step, f.new, ()),
    a_reset_starts_outputs_and_artifacts_over: lambda f: _broken(f, artifacts=f.cp.artifacts),
    settled_effects_leave_the_refs: lambda f: _broken(f, effects=f.cp.effects),
    next_actions_follow_the_status: lambda f: _broken(f, next_actions=("plan",)),
}


def test_the_hand_built_fold_keeps_every_property() -> None:
    for prop in PROPERTIES:
        prop(_one())


@pytest.mark.parametrize("prop", PROPERTIES, ids=lambda p: p.__name__)
def test_each_property_fails_on_a_fold_that_breaks_it(prop: Callable[[Folded], None]) -> None:
    assert set(WRONG) == set(PROPERTIES)
    with pytest.raises(AssertionError):
        prop(WRONG[prop](_one()))
