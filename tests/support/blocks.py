"""The fenced code blocks of README.md and docs/, each with the marker that says how it is tested.

A marker is the HTML comment on the line right above a block's opening fence (invisible on a
rendered page): `<!-- file: NAME -->` (the block is, or continues, the file NAME of the
document's fresh project), `<!-- run -->` (its commands or its Python run in that project),
`<!-- file: NAME; run: COMMAND -->` (write, then run COMMAND there), `<!-- output -->` (a
`text` block: what the run block above it prints, `…` standing for anything), `<!-- parse
only: WHY -->` (its commands are checked against the real CLI and the repository, not run),
`<!-- example: NAME -->` (another test takes the block by that marker), `<!-- sketch: NAME -->`
(a Python outline of the object NAME, compared with it) and `<!-- model: NAME -->` (JSON that
must validate as the pydantic model NAME). A `text` block without a marker is a sample shown to
the reader. Any other block is an error: nothing in the documentation goes untested by default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).parents[2]
# an example's installed packages (`docs/examples/langgraph-ts/node_modules`) are not ours
DOCS = (
    ROOT / "README.md",
    *sorted(p for p in (ROOT / "docs").rglob("*.md") if "node_modules" not in p.parts),
)
DIRECTIVES = frozenset({"file", "run", "output", "parse only", "example", "sketch", "model"})
FENCE = re.compile(r"^```(\S*)\s*$")
MARKER = re.compile(r"^<!--\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    marker: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def parse_marker(comment: str) -> dict[str, str]:
    """`file: a.py; run: pytest` → {"file": "a.py", "run": "pytest"}; a bare `run` → "". A
    `;` that starts no known directive belongs to the text before it (a reason may hold one)."""
    parts: list[str] = []
    for part in comment.split(";"):
        if parts and part.partition(":")[0].strip() not in DIRECTIVES:
            parts[-1] += ";" + part
        else:
            parts.append(part)
    return {p.partition(":")[0].strip(): p.partition(":")[2].strip() for p in parts}


def read_blocks(doc: Path, text: str | None = None) -> list[Block]:
    """Every fenced block of `doc`, in order, with the marker right above it (if any)."""
    lines = (doc.read_text(encoding="utf-8") if text is None else text).splitlines()
    found: list[Block] = []
    start: int | None = None
    lang = ""
    for number, line in enumerate(lines, start=1):
        fence = FENCE.match(line)
        if fence is None:
            continue
        if start is None:
            start, lang = number, fence.group(1)
            continue
        above = MARKER.match(lines[start - 2]) if start > 1 else None
        marker = parse_marker(above.group(1)) if above else {}
        found.append(Block(doc, start, lang, "\n".join(lines[start : number - 1]) + "\n", marker))
        start = None
    if start is not None:
        raise ValueError(f"{doc}:{start}: a code block is never closed")
    return found


def all_blocks() -> list[Block]:
    return [block for doc in DOCS for block in read_blocks(doc)]


def problem(block: Block, before: Block | None) -> str | None:
    """What is wrong with how `block` is marked (`before` is the block above it), or None."""
    unknown = sorted(set(block.marker) - DIRECTIVES)
    if unknown:
        return f"unknown marker directive(s) {unknown}; known: {sorted(DIRECTIVES)}"
    if not block.marker:
        if block.lang == "text":
            return None  # a sample shown to the reader
        return (
            f"an unmarked ```{block.lang} block: mark it (file, run, parse only, example, "
            "sketch, model) or, if it is output, tag it ```text"
        )
    if "output" in block.marker:
        if block.lang != "text":
            return "an output block must be ```text"
        if before is None or "run" not in before.marker:
            return "an output block must follow a run block"
    if "parse only" in block.marker and not block.marker["parse only"]:
        return "say why the block is only parsed: <!-- parse only: WHY -->"
    if "parse only" in block.marker and block.lang != "sh":
        return "only ```sh blocks are parsed"
    if "run" in block.marker and not block.marker["run"] and block.lang not in ("sh", "python"):
        return "only ```sh and ```python blocks run"
    return None


def output_shown(sample: str, output: str) -> str | None:
    """None when `output` shows `sample` (whitespace aside, `…` matching anything), else the
    first piece of the sample the output lacks."""
    flat = " ".join(output.split())
    at = 0
    for piece in (" ".join(p.split()) for p in sample.split("…")):
        found = flat.find(piece, at)
        if found < 0:
            return piece
        at = found + len(piece)
    return None
