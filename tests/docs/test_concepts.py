"""The concept map (docs/concepts.md) is checked against the tree, so it cannot rot: every
concept of the seeds has a row, every module or package it names exists and holds the public
names listed beside it, and every concept is found by the name of its module or package."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.blocks import ROOT

MAP = ROOT / "docs" / "concepts.md"

# The seeds' concepts (issue 26's acceptance): each must have a row.
SEED_CONCEPTS = (
    "checkpoint",
    "lease",
    "ledger",
    "idempotency key",
    "budget",
    "approval",
    "integrity",
    "migration",
    "retention",
    "kill-switch",
    "boundary",
    "schedule",
    "campaign",
    "checker",
    "tamper",
    "fake service",
    "report",
)

LINK = re.compile(r"\[[^\]]*\]\(([^)]+)\)")
NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


@dataclass(frozen=True)
class Row:
    concept: str
    path: str  # relative to the repository's root: reference/lease.py, reports/__init__.py
    names: tuple[str, ...]

    @property
    def module(self) -> str:
        """The import name: the repository's folders install under `killpoint`."""
        parts = Path(self.path).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(("killpoint", *parts))

    @property
    def place(self) -> str:
        """What a reader sees: the module's path, or the package's folder."""
        return self.path.removesuffix("/__init__.py")


def rows(text: str) -> list[Row]:
    """The table's rows, as concept, linked path and the backquoted names."""
    found = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or len(cells) != 3 or cells[0] in ("concept", "---"):
            continue
        link = LINK.search(cells[1])
        assert link is not None, f"row {cells[0]!r} links no module or package"
        path = (MAP.parent / link.group(1)).resolve().relative_to(ROOT.resolve())
        found.append(Row(cells[0], path.as_posix(), tuple(NAME.findall(cells[2]))))
    return found


def found_by_name(concept: str, place: str) -> bool:
    """The concept's name, or one of its words (`idempotency` of "idempotency key"), is in the
    path; a plural or -y ending may differ (boundary → boundaries), a hyphen may go (killswitch)."""
    words = re.findall(r"[a-z]+", concept.lower())
    stems = {w.removesuffix("s").removesuffix("y") for w in words} | {"".join(words)}
    return any(stem in place.lower() for stem in stems)


ROWS = rows(MAP.read_text())


def test_every_seed_concept_has_a_row() -> None:
    """The acceptance: each concept of the seeds is listed in the docs' concept map."""
    listed = {row.concept for row in ROWS}
    assert [c for c in SEED_CONCEPTS if c not in listed] == []


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.concept}:{row.place}")
def test_each_module_in_the_map_exists_and_holds_its_names(row: Row) -> None:
    """A renamed or moved module, or a name that left it, fails here, not in a reader's hands."""
    assert (ROOT / row.path).is_file(), f"{row.path} does not exist"
    module = importlib.import_module(row.module)
    assert [n for n in row.names if not hasattr(module, n)] == []


def test_every_concept_is_found_by_a_module_or_package_name() -> None:
    """One hop: a newcomer looking for a concept finds it by the name of a file or folder."""
    places: dict[str, list[str]] = {}
    for row in ROWS:
        places.setdefault(row.concept, []).append(row.place)
    hidden = {c: p for c, p in places.items() if not any(found_by_name(c, x) for x in p)}
    assert hidden == {}


def test_the_readme_links_the_concept_map() -> None:
    assert "(docs/concepts.md)" in (ROOT / "README.md").read_text()
