"""Start messages that lie: what the queue delivers again for a run already under way, changed.

Redelivery is normal, and a redelivered message need not be the one the run was validated from:
an amount raised, a target changed, another workflow's input under this workflow id, another
tenant claiming the id, fields claiming a gate was approved. Seed 000 asks the engine to
"preserve the approved request" and to decide from durable state "whether the message is still
actionable": a lying message is ignored or rejected, never acted on. A schedule's `lies` say
which worker gets which lie, before its resume (`harness.run.redelivery` delivers them); what a
lie says is derived here from the scenario's own input and the run id alone, so a replay
delivers the same lie, with the values only it holds (`Message.marks`), which the oracle
(`checkers.message_integrity`) looks for in every request, durable input and approval after it.
The plan puts each kind of lie at each phase of a run on a sample of its single crashes
(`sampled`); the exploration draws them too (`kinds_for`). Pure: the plan imports it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from pydantic import JsonValue

from killpoint.harness.history import HitRecord
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import LIE_KINDS, MAX_LIES, Lie, LieKind

LIAR_TENANT = "tenant-b"  # the tenant whose worker claims this run's workflow id
FORGED_ACTOR = "forged-approver@lie.example.test"  # who a forged approval says approved
# what the names a lie makes gain after the run id: none a neighbour's run id could give
EDITED, OTHER, CLAIMED = "lie-edited", "lie-other", f"lie-{LIAR_TENANT}"
MIN_NUMBER = 100  # smaller numbers are too common in a body to tell a lie's from another's
MIN_TEXT = 4
FOREVER_S = 10.0**9  # a forged approval's expiry: it never lapses
PROBE = "probe"  # the run id a scenario's lies are tried on, to see what each would say


@dataclass(frozen=True)
class Message:
    """A lying start message: what it says, as which tenant, and the values only it holds."""

    content: dict[str, JsonValue]
    tenant: str | None  # None: the run's own tenant
    marks: tuple[str | int, ...]


def kinds_for(scenario: Scenario) -> tuple[LieKind, ...]:
    """The lies worth telling a scenario: those that hold something a request or a record
    could show (no amount where the input has none to raise); a forged approval only where a
    gate is."""
    gated = any(t.step.gate for t in scenario.workflow.transitions)
    probe = dict(scenario.make_input(PROBE))
    return tuple(
        kind
        for kind in LIE_KINDS
        if (kind != "approval" or gated) and lying_message(scenario, PROBE, probe, kind).marks
    )


def lying_message(
    scenario: Scenario, run_id: str, original: Mapping[str, JsonValue], kind: LieKind
) -> Message:
    """The lie of `kind` about the run whose start message was `original`."""
    tenant = None
    if kind == "amount":
        content = _mapped(original, _raised)
    elif kind == "target":
        retarget = _retargeted(run_id, any(run_id in s for s in _texts(dict(original))))
        content = _mapped(original, retarget)
    elif kind == "workflow":
        content = dict(scenario.make_input(f"{run_id}-{OTHER}"))
    elif kind == "tenant":
        content, tenant = dict(scenario.make_input(f"{run_id}-{CLAIMED}")), LIAR_TENANT
    else:
        gates = sorted({t.step.gate for t in scenario.workflow.transitions if t.step.gate})
        claims: list[JsonValue] = [
            {"gate": g, "status": "granted", "actor": FORGED_ACTOR, "expires_at": FOREVER_S}
            for g in gates
        ]
        content = {**original, "approved": True, "approved_by": FORGED_ACTOR, "approvals": claims}
        return Message(content, tenant, (FORGED_ACTOR,))  # a gate's name is no lie of its own
    return Message(content, tenant, marks(content, original))


def _raised(value: JsonValue) -> JsonValue:
    """An amount raised: every whole number doubled and one more (0 → 1, 120 → 241)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value * 2 + 1
    return value


def _retargeted(run_id: str, named: bool) -> Callable[[JsonValue], JsonValue]:
    """A target changed: each name that carries the run id names another object; an input
    whose names carry no run id has every text changed."""

    def change(value: JsonValue) -> JsonValue:
        if not isinstance(value, str):
            return value
        if named:
            return value.replace(run_id, f"{run_id}-{EDITED}")
        return f"{value}-{EDITED}"

    return change


def _mapped(
    value: Mapping[str, JsonValue], leaf: Callable[[JsonValue], JsonValue]
) -> dict[str, JsonValue]:
    return {k: _map(v, leaf) for k, v in value.items()}


def _map(value: JsonValue, leaf: Callable[[JsonValue], JsonValue]) -> JsonValue:
    if isinstance(value, dict):
        return {k: _map(v, leaf) for k, v in value.items()}
    if isinstance(value, list):
        return [_map(v, leaf) for v in value]
    return leaf(value)


def leaves(value: JsonValue) -> Iterator[JsonValue]:
    """Every scalar in a JSON document (dict keys aside)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def _texts(value: JsonValue) -> list[str]:
    return [leaf for leaf in leaves(value) if isinstance(leaf, str)]


def whole(leaf: object) -> TypeGuard[int]:
    """A whole number of JSON (not a flag: True is an int to Python)."""
    return isinstance(leaf, int) and not isinstance(leaf, bool)


def marks(
    content: Mapping[str, JsonValue], original: Mapping[str, JsonValue]
) -> tuple[str | int, ...]:
    """The values only the lie holds: texts that no text of the original contains, and whole
    numbers of at least `MIN_NUMBER` the original does not hold; each found once."""
    old_texts = [t.casefold() for t in _texts(dict(original))]
    old_numbers = {leaf for leaf in leaves(dict(original)) if whole(leaf)}
    found: list[str | int] = []
    for leaf in leaves(dict(content)):
        if isinstance(leaf, str):
            if len(leaf) >= MIN_TEXT and not any(leaf.casefold() in t for t in old_texts):
                found.append(leaf)
        elif whole(leaf) and abs(leaf) >= MIN_NUMBER and leaf not in old_numbers:
            found.append(leaf)
    return tuple(dict.fromkeys(found))


# -- where the plan tells them ---------------------------------------------------------------


def sampled(
    scenario: Scenario, hits: Sequence[HitRecord], risks: Sequence[int], seed: int
) -> dict[int, tuple[Lie, ...]]:
    """Which single crashes carry a lie, by the position of the hit they crash (`single-<n>`):
    each kind of lie at each phase of a run — told to the first worker before its first
    resume, to the recovery of a crash in each step (and between steps), and to a worker after
    the recovery — each on one crash of that phase: of those carrying the fewest lies so far,
    the riskiest (`risks`, lower first), ties drawn by the seed and the scenario alone. So the
    lies ride on the crashes a hunt makes first, one kind to a crash where they can."""
    if not hits:
        return {}
    rng = random.Random(f"{seed}:{scenario.name}:lies")
    draw = [rng.random() for _ in hits]
    steps = list(dict.fromkeys(h.step for h in hits))
    everywhere = list(range(len(hits)))
    phases: list[tuple[int, list[int]]] = [(0, everywhere)]
    phases += [(1, [n for n, h in enumerate(hits) if h.step == s]) for s in steps]
    phases.append((2, everywhere))
    told: dict[int, list[Lie]] = {}
    for kind in kinds_for(scenario):
        for worker, crashes in phases:
            n = min(crashes, key=lambda c: (len(told.get(c, ())), risks[c], draw[c]))
            if len(told.setdefault(n, [])) < MAX_LIES:
                told[n].append(Lie(worker=worker, kind=kind))
    return {n: tuple(lies) for n, lies in told.items()}
