"""Links from a page to the repository's own files (`../reference/lease.py`, `../BENCHMARKS.md`)
or folders (`examples/mcp_agent/`) lie outside the site: mkdocs cannot check or serve them. This
hook checks each one against the repository (a broken one is a warning, so `mkdocs build
--strict` fails on it) and, as the site has no copy of the file, shows its path as code in place
of a link that would lead nowhere."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

LINK = re.compile(r"\[([^\]]+)\]\(([^)\s#]+)(#[^)\s]*)?\)")
log = logging.getLogger("mkdocs.hooks.source_links")


def outside(markdown: str, page_file: Path, docs: Path) -> tuple[str, list[str]]:
    """The markdown with each link out of `docs` made a path in code, and the broken ones."""
    root, broken = docs.parent.resolve(), []

    def replace(match: re.Match[str]) -> str:
        text, target = match.group(1), match.group(2)
        if "://" in target or target.startswith(("mailto:", "/")):
            return match.group(0)
        path = (page_file.parent / target).resolve()
        if path.is_relative_to(docs.resolve()) and not path.is_dir():
            return match.group(0)  # the site's own page or file: mkdocs checks it
        if not path.exists() or not path.is_relative_to(root):
            broken.append(target)
            return match.group(0)
        shown = path.relative_to(root).as_posix()
        return text if shown in text else f"{text} (`{shown}`)"

    return LINK.sub(replace, markdown), broken


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"])
    if page.file.abs_src_path is None:
        return markdown  # a generated page links only inside the site
    changed, broken = outside(markdown, Path(page.file.abs_src_path), docs)
    for target in broken:
        log.warning("%s links %s, which is not in the repository", page.file.src_uri, target)
    return changed
