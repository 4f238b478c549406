"""Hypothesis strategies that break a valid JSON document the ways its schema forbids.

A `Shape` says what a document's schema allows, by dotted path (`*` for any list index); each
breakage draws one change from the valid document, so a test knows the result must be refused:
a required field dropped, a value of the wrong JSON kind, an unknown field, an absurd value (a
number past what can be stored, NaN or infinity, a number outside its field's bounds, a string
outside its enumeration) and nesting deeper than any parser here follows. `broken` combines a
few changes whose paths are apart, so one never undoes another. Giant strings ride along as
wrong kinds and unknown values.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

Doc = dict[str, Any]
Path = tuple[str | int, ...]
INT64 = 2**63


@dataclass(frozen=True)
class Shape:
    free: tuple[str, ...] = ()  # below these, any JSON is valid
    optional: tuple[str, ...] = ()  # may be absent; every other field is required
    nullable: Mapping[str, str] = field(default_factory=dict)  # may be null; else of this kind
    bounds: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    enums: Mapping[str, frozenset[str]] = field(default_factory=dict)  # the values allowed


def dotted(path: Path) -> str:
    return ".".join("*" if isinstance(p, int) else p for p in path)


def matches(path: Path, patterns: Any) -> bool:
    return any(fnmatch.fnmatchcase(dotted(path), p) for p in patterns)


def lookup(path: Path, table: Mapping[str, Any]) -> Any:
    return next((v for p, v in table.items() if fnmatch.fnmatchcase(dotted(path), p)), None)


def nodes(doc: Any, shape: Shape, path: Path = ()) -> list[tuple[Path, Any]]:
    """Every (path, value) of the document, not descending below a free path."""
    found: list[tuple[Path, Any]] = [(path, doc)] if path else []
    if path and matches(path, shape.free):
        return found
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += nodes(value, shape, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += nodes(value, shape, (*path, index))
    return found


def replace(doc: Any, path: Path, value: Any) -> Any:
    """`doc` with `value` at `path` (a new key where the last step names none)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        assert isinstance(head, str)
        return {**doc, head: replace(doc[head], rest, value) if rest else value}
    assert isinstance(head, int)
    copy = list(doc)
    copy[head] = replace(doc[head], rest, value)
    return copy


def drop(doc: Any, path: Path) -> Any:
    head, rest = path[0], path[1:]
    if rest:
        return replace(doc, (head,), drop(doc[head], rest))
    return {k: v for k, v in doc.items() if k != head}


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


KINDS: tuple[tuple[str, type], ...] = (("null", type(None)), ("bool", bool), ("int", int))
KINDS += (("float", float), ("str", str), ("list", list), ("dict", dict), ("deep", Deep))


def kind_of(value: Any) -> str:
    """The JSON kind of a value (a bool is no int here, as in JSON)."""
    return next(name for name, types in KINDS if isinstance(value, types))


giant_strings = st.integers(2**16, 2**19).map(lambda n: "x" * n)
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


def wrong_kinds(shape: Shape, path: Path, value: Any) -> list[str]:
    """The JSON kinds a value at `path` must not be (an int is a fine float)."""
    kind = kind_of(value)
    fine = {kind} | ({"int"} if kind == "float" else set())
    other = lookup(path, shape.nullable)
    if other is not None:
        fine |= {"null", other}
    return [k for k in BY_KIND if k not in fine]


# -- breakages ---------------------------------------------------------------------------------

Change = tuple[Path, Callable[[Doc], Doc]]
Breakage = Callable[[Doc, Shape], st.SearchStrategy[Change]]


def setting(path: Path, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Change]:
    return values.map(lambda value: (path, lambda d: replace(d, path, value)))


def dropped_field(doc: Doc, shape: Shape) -> st.SearchStrategy[Change]:
    required = [
        p for p, _ in nodes(doc, shape) if isinstance(p[-1], str) and not matches(p, shape.optional)
    ]
    return st.sampled_from(required).map(lambda p: (p, lambda d: drop(d, p)))


def wrong_kind(doc: Doc, shape: Shape) -> st.SearchStrategy[Change]:
    return st.sampled_from(nodes(doc, shape)).flatmap(
        lambda pv: setting(
            pv[0], st.sampled_from(wrong_kinds(shape, *pv)).flatmap(BY_KIND.__getitem__)
        )
    )


def unknown_field(doc: Doc, shape: Shape) -> st.SearchStrategy[Change]:
    objects: list[Path] = [()]
    objects += [
        p for p, v in nodes(doc, shape) if isinstance(v, dict) and not matches(p, shape.free)
    ]
    value = st.none() | st.integers() | st.text(max_size=5) | giant_strings
    name = st.tuples(st.sampled_from(objects), st.text(min_size=1, max_size=6))
    return name.flatmap(lambda t: setting((*t[0], "zz_" + t[1]), value))


def absurd_value(doc: Doc, shape: Shape) -> st.SearchStrategy[Change]:
    choices: list[tuple[Path, st.SearchStrategy[Any]]] = []
    for path, value in nodes(doc, shape):
        kind = kind_of(value)
        if kind in ("int", "float"):
            choices.append((path, non_finite | (huge_ints if kind == "int" else st.nothing())))
        bounds = lookup(path, shape.bounds)
        if bounds is not None and kind in ("int", "float"):
            choices.append((path, outside(bounds, integral=kind == "int")))
        allowed = lookup(path, shape.enums)
        if allowed is not None:
            choices.append((path, unlisted(allowed)))
    return st.sampled_from(choices).flatmap(lambda pc: setting(*pc))


def unlisted(allowed: frozenset[str]) -> st.SearchStrategy[str]:
    return (st.text(max_size=12) | giant_strings).filter(lambda text: text not in allowed)


def outside(bounds: tuple[float | None, float | None], integral: bool) -> st.SearchStrategy[Any]:
    """A number below or above `bounds` (a bound of None is open)."""
    low, high = bounds
    parts: list[st.SearchStrategy[Any]] = []
    if low is not None:
        below = low - 1 if integral else low
        parts.append(
            st.integers(max_value=int(below))
            if integral
            else st.floats(max_value=below, exclude_max=True, allow_nan=False)
        )
    if high is not None:
        above = high + 1 if integral else high
        parts.append(
            st.integers(min_value=int(above))
            if integral
            else st.floats(min_value=above, exclude_min=True, allow_nan=False)
        )
    return st.one_of(parts)


def too_deep(doc: Doc, shape: Shape) -> st.SearchStrategy[Change]:
    """Nesting past the parsers' limits anywhere, below free paths too."""
    return st.sampled_from([p for p, _ in nodes(doc, shape)]).flatmap(
        lambda p: setting(p, deep_values)
    )


BREAKAGES: tuple[Breakage, ...] = (dropped_field, wrong_kind, unknown_field, absurd_value, too_deep)


def apart(changes: list[Change]) -> bool:
    """No change touches the path of another or a path below it."""
    paths = [path for path, _ in changes]
    return not any(
        (a != b and a[: len(b)] == b) or (a == b and i != j)
        for i, a in enumerate(paths)
        for j, b in enumerate(paths)
    )


def broken(
    doc: Doc, shape: Shape, breakages: tuple[Breakage, ...] = BREAKAGES
) -> st.SearchStrategy[Doc]:
    """`doc` with one to three breakages at paths apart, each of which alone makes it invalid."""
    change = st.one_of([breakage(doc, shape) for breakage in breakages])  # walks `doc` once
    return st.lists(change, min_size=1, max_size=3).filter(apart).map(lambda cs: _apply(doc, cs))


def _apply(doc: Doc, changes: list[Change]) -> Doc:
    for _, change in changes:
        doc = change(doc)
    return doc


def encode(doc: Any) -> bytes:
    """The document as a careless writer would lay it out: NaN, infinity and deep nesting too."""
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


# Any JSON at all, nested a little.
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
