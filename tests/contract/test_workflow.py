"""Workflow definitions: an inconsistent one is rejected when it is built, with the reason."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.clock import FakeClock
from killpoint.contract.errors import DefinitionError
from killpoint.contract.records import RunStatus, Versions
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.reference.dispatcher import Engine
from killpoint.reference.store import Store
from tests.support.flows import ALL_FLOWS, DONE, publish_flow


def pure(name: str) -> Step:
    return Step(name, StepKind.PURE, compute=lambda c: None)


def flow(*transitions: Transition, states: tuple[str, ...] = ("a", "b", "done")) -> Workflow:
    return Workflow(
        name="w",
        plan_version="w@1",
        states=states,
        initial="a",
        terminal=DONE,
        transitions=transitions,
    )


def test_the_test_flows_are_consistent() -> None:
    for make in ALL_FLOWS:
        wf = make()
        assert wf.transition_from(wf.initial) is not None


def test_a_workflow_answers_questions_about_its_graph() -> None:
    wf = publish_flow()
    assert wf.legal("drafted", "posted") and not wf.legal("start", "done")
    assert wf.state_before("create_post") == "drafted"
    assert wf.step("verify_post").kind is StepKind.VERIFY
    assert wf.services == frozenset({"cms"})
    assert wf.transition_from("done") is None


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: flow(
                Transition("a", "b", pure("s1")),
                Transition("b", "done", pure("s2")),
                Transition("c", "done", pure("s3")),
                states=("a", "b", "c", "done"),
            ),
            "unreachable state(s) c",
        ),
        (
            lambda: flow(Transition("a", "b", pure("s1")), Transition("b", "nowhere", pure("s2"))),
            "step 's2' goes to unknown state 'nowhere'",
        ),
        (
            lambda: flow(
                Transition("a", "b", pure("s1")),
                Transition("b", "done", Step("pay", StepKind.EFFECT, intents=lambda c: [])),
            ),
            "effect step 'pay' declares no service",
        ),
        (
            lambda: flow(
                Transition("a", "b", pure("s1")),
                Transition("a", "done", pure("s2")),
                Transition("b", "done", pure("s3")),
            ),
            "state 'a' has two transitions; the next step is ambiguous",
        ),
        (
            lambda: flow(Transition("a", "b", pure("s1")), Transition("b", "done", pure("s1"))),
            "step name 's1' is used twice",
        ),
        (
            lambda: flow(Transition("a", "b", pure("s1"))),
            "state 'b' is neither terminal nor has a transition",
        ),
        (
            lambda: flow(
                Transition("a", "b", pure("s1")),
                Transition("b", "done", pure("s2")),
                Transition("done", "a", pure("s3")),
            ),
            "terminal state 'done' has an outgoing transition",
        ),
        (
            lambda: flow(
                Transition("a", "b", pure("s1")),
                Transition(
                    "b",
                    "done",
                    Step("check", StepKind.VERIFY, service="cms", target_step="ghost"),
                ),
            ),
            "refers to unknown step 'ghost'",
        ),
        (
            lambda: flow(
                Transition("a", "b", pure("s1")),
                Transition("b", "done", Step("ok", StepKind.APPROVAL)),
            ),
            "approval step 'ok' declares no gate",
        ),
        (lambda: flow(states=("a", "a", "done")), "a state is declared twice"),
        (
            lambda: Workflow("w", "w@1", ("a", "done"), "z", DONE, ()),
            "initial state 'z' is not a declared state",
        ),
        (
            lambda: Workflow("w", "w@1", ("a",), "a", {"done": RunStatus.COMPLETED}, ()),
            "terminal state 'done' is not a declared state",
        ),
    ],
)
def test_an_inconsistent_definition_is_rejected_at_load_time(
    build: Callable[[], Workflow], message: str
) -> None:
    with pytest.raises(DefinitionError, match=r"^workflow 'w': ") as err:
        build()
    assert message in str(err.value)


def test_an_engine_refuses_a_workflow_whose_service_has_no_adapter(
    store: Store, clock: FakeClock, tmp_path: Path
) -> None:
    with pytest.raises(DefinitionError, match=r"uses service\(s\) \['cms'\] with no adapter"):
        Engine(
            store,
            [publish_flow()],
            {},
            artifacts=FolderArtifacts(tmp_path),
            clock=clock,
            versions=Versions(plan="p", prompt="p", model_contract="m", tool_schema="t"),
        )


def test_an_unknown_workflow_name_is_a_definition_error(engine: Engine) -> None:
    with pytest.raises(DefinitionError, match="no workflow named 'nope'"):
        engine.start("nope", "wf-1", {})
