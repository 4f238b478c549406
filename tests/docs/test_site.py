"""The documentation site: its generated references cover every scenario and every public name,
its links into the repository are checked, and (where mkdocs is installed) it builds strictly."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import killpoint
from killpoint.harness.catalogue import installed
from killpoint.reports.definitions import METRICS
from tests.support.blocks import ROOT
from tests.support.needs import needs

DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$", re.MULTILINE)


def hook(name: str) -> ModuleType:
    """A hook of mkdocs.yml, loaded from its file as mkdocs loads it."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PAGES: dict[str, str] = hook("reference_pages").pages()


@pytest.mark.parametrize("name", sorted(installed().scenarios))
def test_every_catalogue_scenario_has_a_reference_page_of_its_workflow(name: str) -> None:
    scenario = installed().scenario(name)
    page = PAGES[f"reference/scenarios/{name}.md"]
    steps = [t.step.name for t in scenario.workflow.transitions]
    said = [f"`{x}`" for x in (*scenario.workflow.states, *steps, *scenario.make_input("example"))]
    assert [x for x in said if x not in page] == []
    assert f"reference/scenarios/{name}.md" in PAGES["reference/scenarios.md"].replace(
        "(scenarios/", "(reference/scenarios/"
    )


def test_a_step_that_reads_an_earlier_receipt_says_what_it_needs() -> None:
    """The fact a newcomer learned from a traceback: `ship` needs the charge, committed."""
    page = PAGES["reference/scenarios/order_saga.md"]
    assert (
        "| `ship` | → `publisher` | needs: step 'ship' needs a committed effect of 'charge' |"
        in page
    )


def test_every_service_page_section_names_its_flags_and_its_adapter() -> None:
    page = PAGES["reference/services.md"]
    for name in installed().services:
        section = page.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
        assert "idempotent: **" in section and "::: killpoint.scenarios." in section, name


def test_the_metrics_page_defines_every_metric_of_the_report() -> None:
    page = PAGES["reference/metrics.md"]
    assert [d.key for d in METRICS if f"`{d.key}` — {d.meaning}" not in page] == []


def resolve(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_public_name_of_killpoint_is_in_the_api_reference() -> None:
    text = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    text += "".join(PAGES.values())
    shown = [resolve(path) for path in DIRECTIVE.findall(text)]
    missing = [n for n in killpoint.__all__ if not any(getattr(killpoint, n) is x for x in shown)]
    assert missing == []


def test_a_link_into_the_repository_becomes_its_path_and_a_broken_one_is_named() -> None:
    outside = hook("source_links").outside
    docs = ROOT / "docs"
    page = docs / "concepts.md"
    markdown = "[the lease](../reference/lease.py), [gone](../no/such.py), [tour](tutorial.md)"
    changed, broken = outside(markdown, page, docs)
    assert changed == (
        "the lease (`reference/lease.py`), [gone](../no/such.py), [tour](tutorial.md)"
    )
    assert broken == ["../no/such.py"]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """A broken link, anchor, nav entry or API reference fails the build, and so this test."""
    mkdocs = Path(sys.executable).parent / "mkdocs"
    needs(
        mkdocs.exists(), "mkdocs is not installed (pip install -e '.[docs]'); .ci/run installs it"
    )
    built = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr


def test_the_readme_is_a_door_whose_links_all_lead_somewhere() -> None:
    """The manual lives on the site; the README stays short, and no link of it dangles (the site's
    strict build checks the pages' links, not the README's)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert len(text.splitlines()) <= 200
    assert local and [t for t in local if not (ROOT / t).exists()] == []


def test_every_checker_has_its_section_on_the_checkers_page() -> None:
    from killpoint.harness.checkers import CHECKERS

    page = (ROOT / "docs" / "reference" / "checkers.md").read_text(encoding="utf-8")
    for name, checker in CHECKERS.items():
        assert f"## `{name}`\n\n::: {checker.__module__}\n" in page, name
