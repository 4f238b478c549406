"""Workflows as explicit state machines.

A workflow names its states, the single legal transition out of each non-terminal state, and the
step that transition runs. Progress is a state name in a checkpoint, never something inferred
from prose. Definitions are checked when they are built, so an inconsistent one never runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import JsonValue

from killpoint.contract.errors import DefinitionError
from killpoint.contract.records import EffectIntent, RunStatus

if TYPE_CHECKING:
    from killpoint.contract.context import StepContext


class StepKind(StrEnum):
    PURE = "pure"  # replayable; its small result is kept in the checkpoint
    EXPENSIVE = "expensive"  # its result is an artifact, reused after a resume
    EFFECT = "effect"  # calls a downstream service under the write-ahead protocol
    APPROVAL = "approval"  # a human gate
    VERIFY = "verify"  # reads authoritative state to prove a postcondition
    COMPENSATE = "compensate"  # a new effect that semantically undoes an earlier one


PureFn = Callable[["StepContext"], JsonValue]
ExpensiveFn = Callable[["StepContext"], bytes]
IntentsFn = Callable[["StepContext"], Sequence[EffectIntent]]
Validator = Callable[[JsonValue], str | None]
TermsFn = Callable[["StepContext"], float | None]


@dataclass(frozen=True)
class Step:
    name: str
    kind: StepKind
    compute: PureFn | None = None
    produce: ExpensiveFn | None = None
    media_type: str = "application/octet-stream"
    intents: IntentsFn | None = None
    service: str | None = None
    gate: str | None = None  # approval: the gate it opens; effect: the gate that must be valid
    target_step: str | None = None  # verify / compensate: which effect step it acts on
    validate: Validator | None = None
    cost: int = 1
    max_verify_reads: int = 5
    # effect: when the terms it acts under lapse (a handoff's deadline, on the world clock);
    # like an approval, they are checked again before every send, not only when accepted
    expires: TermsFn | None = None


@dataclass(frozen=True)
class Transition:
    source: str
    target: str
    step: Step
    on_failure: str | None = None  # where a definite downstream rejection leads


@dataclass(frozen=True)
class Workflow:
    name: str
    plan_version: str
    states: tuple[str, ...]
    initial: str
    terminal: Mapping[str, RunStatus]
    transitions: tuple[Transition, ...]
    _by_source: dict[str, Transition] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_source", _check(self))

    def transition_from(self, state: str) -> Transition | None:
        return self._by_source.get(state)

    def step(self, name: str) -> Step:
        for t in self.transitions:
            if t.step.name == name:
                return t.step
        raise KeyError(name)

    def state_before(self, step_name: str) -> str:
        for t in self.transitions:
            if t.step.name == step_name:
                return t.source
        raise KeyError(step_name)

    def legal(self, source: str, target: str) -> bool:
        t = self._by_source.get(source)
        return t is not None and target in (t.target, t.on_failure)

    def gate_state(self, gate: str) -> str:
        for t in self.transitions:
            if t.step.kind is StepKind.APPROVAL and t.step.gate == gate:
                return t.source
        raise KeyError(gate)

    @property
    def services(self) -> frozenset[str]:
        return frozenset(t.step.service for t in self.transitions if t.step.service)


def _fail(workflow: Workflow, message: str) -> DefinitionError:
    return DefinitionError(f"workflow {workflow.name!r}: {message}")


def _check(wf: Workflow) -> dict[str, Transition]:
    states = set(wf.states)
    if len(states) != len(wf.states):
        raise _fail(wf, "a state is declared twice")
    if wf.initial not in states:
        raise _fail(wf, f"initial state {wf.initial!r} is not a declared state")
    for name in wf.terminal:
        if name not in states:
            raise _fail(wf, f"terminal state {name!r} is not a declared state")
    by_source: dict[str, Transition] = {}
    names: set[str] = set()
    for t in wf.transitions:
        for end in (t.source, t.target, t.on_failure):
            if end is not None and end not in states:
                raise _fail(wf, f"step {t.step.name!r} goes to unknown state {end!r}")
        if t.source in wf.terminal:
            raise _fail(wf, f"terminal state {t.source!r} has an outgoing transition")
        if t.source in by_source:
            raise _fail(wf, f"state {t.source!r} has two transitions; the next step is ambiguous")
        if t.step.name in names:
            raise _fail(wf, f"step name {t.step.name!r} is used twice")
        by_source[t.source] = t
        names.add(t.step.name)
        _check_step(wf, t.step)
    for t in wf.transitions:
        if t.step.target_step is not None and t.step.target_step not in names:
            raise _fail(wf, f"step {t.step.name!r} refers to unknown step {t.step.target_step!r}")
    for state in states - set(wf.terminal):
        if state not in by_source:
            raise _fail(wf, f"state {state!r} is neither terminal nor has a transition")
    reached, frontier = {wf.initial}, [wf.initial]
    while frontier:
        t2 = by_source.get(frontier.pop())
        for nxt in (t2.target, t2.on_failure) if t2 else ():
            if nxt is not None and nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    unreachable = sorted(states - reached)
    if unreachable:
        raise _fail(wf, f"unreachable state(s) {', '.join(unreachable)}")
    return by_source


_NEEDS = {
    StepKind.PURE: ("compute",),
    StepKind.EXPENSIVE: ("produce",),
    StepKind.EFFECT: ("intents", "service"),
    StepKind.APPROVAL: ("gate",),
    StepKind.VERIFY: ("service", "target_step"),
    StepKind.COMPENSATE: ("intents", "service", "target_step"),
}


def _check_step(wf: Workflow, step: Step) -> None:
    for attr in _NEEDS[step.kind]:
        if getattr(step, attr) is None:
            raise _fail(wf, f"{step.kind} step {step.name!r} declares no {attr}")
