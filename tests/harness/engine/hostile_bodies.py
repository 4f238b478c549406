"""Checkpoint bodies of every schema (v1 to v4) and Hypothesis strategies that break them.

Each valid body is the publish flow parked at `drafted`: resumed, it posts to the cms, so a
body that is wrongly accepted shows up as a request in the services' journal. The breakages
are the ones a body's schema forbids, so each must be refused: a required field dropped, a
field of the wrong JSON type, an unknown field, an absurd value (a number past what the store
can hold, NaN or infinity, a negative count, a value outside its enumeration), nesting deeper
than any parser here follows, and a body that disagrees with its row about who it is.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from killpoint.harness.contract.clock import FakeClock
from killpoint.harness.engine.model import Budget, Checkpoint, Lineage, OutputsRef
from tests.harness.flows import VERSIONS
from tests.harness.test_migrations import v1_doc, v2_doc, v3_doc

Doc = dict[str, Any]
Path = tuple[str | int, ...]

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


def run_id_of(doc: Doc) -> str:
    return str(doc["run_id"] if doc["schema_version"] == 1 else doc["lineage"]["run_id"])


# -- what each schema allows --------------------------------------------------------------------
# Paths are dotted, `*` for any list index. Below a free path any JSON is valid.
FREE = ("input", "outputs")
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
NULLABLE = ("lineage.parent_run_id", "effects.*.receipt_id", "approved_by")
# Counts that are never negative, in any schema.
NON_NEGATIVE = ("sequence", "limits.*", "spent.*", "budget.attempts_left", "budget.steps_left",
                "outputs_ref.*")  # fmt: skip
ENUMS = ("status", "lineage.decision", "effects.*.status", "pending.*.kind")
# What a body says about who it is, which its row says too.
IDENTITY = ("workflow_id", "state", "sequence", "tenant", "owner_tenant", "run_id",
            "lineage.run_id")  # fmt: skip
INT64 = 2**63


def dotted(path: Path) -> str:
    return ".".join("*" if isinstance(p, int) else p for p in path)


def matches(path: Path, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(dotted(path), p) for p in patterns)


def nodes(doc: Any, path: Path = ()) -> list[tuple[Path, Any]]:
    """Every (path, value) of the document, not descending below a free path."""
    found: list[tuple[Path, Any]] = [(path, doc)] if path else []
    if path and dotted(path) in FREE:
        return found
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += nodes(value, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += nodes(value, (*path, index))
    return found


def replace(doc: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: replace(doc[head], rest, value)} if rest else {**doc, head: value}
    assert isinstance(head, int)
    copy = list(doc)
    copy[head] = replace(doc[head], rest, value)
    return copy


def drop(doc: Any, path: Path) -> Any:
    head, rest = path[0], path[1:]
    if rest:
        return replace(doc, (head,), drop(doc[head], rest))
    return {k: v for k, v in doc.items() if k != head}


KINDS: tuple[tuple[str, type], ...] = (("null", type(None)), ("bool", bool), ("int", int))
KINDS += (("float", float), ("str", str), ("list", list), ("dict", dict))


def kind_of(value: Any) -> str:
    """The JSON kind of a value (a bool is no int here, as in JSON)."""
    if isinstance(value, Deep):
        return "deep"
    return next(name for name, types in KINDS if isinstance(value, types))


# -- hostile values ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Deep:
    """A value nested `depth` levels deep, spliced in by `encode` (json.dumps would recurse)."""

    depth: int
    lists: bool = True

    def text(self) -> str:
        if self.lists:
            return "[" * self.depth + "1" + "]" * self.depth
        return '{"a":' * self.depth + "1" + "}" * self.depth


giant_strings = st.integers(2**17, 2**20).map(lambda n: "x" * n)
huge_ints = st.integers(min_value=INT64) | st.integers(max_value=-INT64 - 1)
non_finite = st.sampled_from([float("nan"), float("inf"), float("-inf")])
# Deeper than pydantic's JSON parser (about 255 levels) or json's (the recursion limit) go.
deep_values = st.builds(Deep, st.integers(300, 3000), lists=st.booleans())
BY_KIND: dict[str, st.SearchStrategy[Any]] = {
    "null": st.none(),
    "bool": st.booleans(),
    "int": st.integers(-(2**40), 2**40),
    "float": st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != int(f))
    | non_finite,
    "str": st.text(max_size=8) | giant_strings,
    "list": st.lists(st.integers(), max_size=2),
    "dict": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
}


def wrong_kinds(path: Path, value: Any) -> list[str]:
    """The JSON kinds a value at `path` must not be (an int is a fine float)."""
    kind = kind_of(value)
    fine = {kind} | ({"int"} if kind == "float" else set())
    if matches(path, NULLABLE):
        fine |= {"null", "str"}
    return [k for k in BY_KIND if k not in fine]


# -- breakages: each makes a body its schema forbids -------------------------------------------
# A breakage is drawn from the valid body: the path it touches and how. `broken` combines a few
# whose paths are apart, so one can never undo another.

Change = tuple[Path, Callable[[Doc], Doc]]
Breakage = Callable[[Doc], st.SearchStrategy[Change]]


def _set(path: Path, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Change]:
    return values.map(lambda value: (path, lambda d: replace(d, path, value)))


def dropped_field(doc: Doc) -> st.SearchStrategy[Change]:
    version = doc.get("schema_version", 4)
    required = [
        p
        for p, _ in nodes(doc)
        if not isinstance(p[-1], int) and not matches(p, OPTIONAL.get(version, ()))
    ]
    return st.sampled_from(required).map(lambda p: (p, lambda d: drop(d, p)))


def wrong_type(doc: Doc) -> st.SearchStrategy[Change]:
    return st.sampled_from(nodes(doc)).flatmap(
        lambda pv: _set(pv[0], st.sampled_from(wrong_kinds(*pv)).flatmap(BY_KIND.__getitem__))
    )


def unknown_field(doc: Doc) -> st.SearchStrategy[Change]:
    objects: list[Path] = [()]
    objects += [p for p, v in nodes(doc) if isinstance(v, dict) and dotted(p) not in FREE]
    value = st.none() | st.integers() | st.text(max_size=5) | giant_strings
    field = st.tuples(st.sampled_from(objects), st.text(min_size=1, max_size=6))
    return field.flatmap(lambda t: _set((*t[0], "zz_" + t[1]), value))


def absurd_value(doc: Doc) -> st.SearchStrategy[Change]:
    choices: list[tuple[Path, st.SearchStrategy[Any]]] = []
    for path, value in nodes(doc):
        kind = kind_of(value)
        if kind == "int":
            choices.append((path, huge_ints | non_finite))
            if matches(path, NON_NEGATIVE):
                choices.append((path, st.integers(-(2**31), -1)))
        elif kind == "float":
            choices.append((path, non_finite))
        if matches(path, ENUMS):
            choices.append((path, st.text(max_size=12).filter(_not_an_enum) | giant_strings))
    return st.sampled_from(choices).flatmap(lambda pc: _set(*pc))


def _not_an_enum(text: str) -> bool:
    known = {"running", "waiting_approval", "completed", "failed", "needs_review"}
    known |= {"budget_exhausted", "quarantined", "compensated", "start", "continue"}
    known |= {"branch", "restart", "prepared", "started", "committed", "verified", "unknown"}
    known |= {"approval", "reconcile", "review", "handoff", "verify"}
    return text not in known


def too_deep(doc: Doc) -> st.SearchStrategy[Change]:
    """Nesting past the parsers' limits anywhere, free paths included."""
    everywhere = [p for p, _ in nodes(doc)] + [("input", "slug"), ("outputs", "draft")]
    return st.sampled_from(everywhere).flatmap(lambda p: _set(p, deep_values))


def other_identity(doc: Doc) -> st.SearchStrategy[Change]:
    """A body that says it is another workflow, state, sequence, tenant or run than its row."""
    own = [(p, v) for p, v in nodes(doc) if matches(p, IDENTITY)]

    def other(pv: tuple[Path, Any]) -> st.SearchStrategy[Change]:
        path, value = pv
        values: st.SearchStrategy[Any] = (
            st.integers(1, 2**31 - 1)
            if isinstance(value, int)
            else st.sampled_from(["pure", "pay", "start", "done", "other"]) | st.text(max_size=8)
        )
        return _set(path, values.filter(lambda v: v != value))

    return st.sampled_from(own).flatmap(other)


def other_workflow(doc: Doc) -> st.SearchStrategy[Change]:
    """A body naming another of the engine's workflows than its workflow row does: only the
    resume, which reads that row, can tell."""
    return _set(("workflow_name",), st.sampled_from(["pure", "pay", "notify", "artifact"]))


BREAKAGES: tuple[Breakage, ...] = (
    dropped_field,
    wrong_type,
    unknown_field,
    absurd_value,
    too_deep,
    other_identity,
)


def _apart(changes: list[Change]) -> bool:
    paths = [path for path, _ in changes]
    return not any(
        (a != b and a[: len(b)] == b) or (a == b and i != j)
        for i, a in enumerate(paths)
        for j, b in enumerate(paths)
    )


def broken(doc: Doc, breakages: tuple[Breakage, ...] = BREAKAGES) -> st.SearchStrategy[Doc]:
    """`doc` with one to three breakages at paths apart, each of which alone makes it invalid."""
    change = st.sampled_from(breakages).flatmap(lambda breakage: breakage(doc))
    return (
        st.lists(change, min_size=1, max_size=3)
        .filter(_apart)
        .map(lambda changes: _apply(doc, changes))
    )


def _apply(doc: Doc, changes: list[Change]) -> Doc:
    for _, change in changes:
        doc = change(doc)
    return doc


def encode(doc: Doc) -> bytes:
    """The body as a careless writer would lay it out: NaN, infinity and deep nesting too."""
    spliced: dict[str, str] = {}

    def splice(value: object) -> str:
        assert isinstance(value, Deep)
        token = f"@@deep{len(spliced)}@@"
        spliced[f'"{token}"'] = value.text()
        return token

    text = json.dumps(
        doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=splice
    )
    for token, nested in spliced.items():
        text = text.replace(token, nested)
    return text.encode()
