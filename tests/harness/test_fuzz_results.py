"""Hypothesis over `killpoint merge`'s loader of campaign results: a valid result broken the
ways its schema forbids is one `KillpointError`, through the CLI one line and exit status 2 with
nothing created; what loads, merges, sums up and renders. Each input is counted
(`tests/support/fuzz.py`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign.merge import merge_results
from killpoint.harness.results import MAX_SECONDS, load_result
from killpoint.reports import summary_json, write_html
from killpoint.reports.junit import junit_xml
from tests.support import fuzz
from tests.support import hostile_json as hj
from tests.support.campaigns import sample_campaign
from tests.support.loader_inputs import File, any_bytes, refused_by_the_cli

# -- campaign results --------------------------------------------------------------------------

RESULT_DOC: hj.Doc = json.loads(sample_campaign().model_dump_json())
COUNT = (0, hj.INT64 - 1)
SECONDS = (0, MAX_SECONDS)
# Where a run sits in a result: among the runs, under the mutant it caught, under a test's catch.
RUNS = ("runs.*", "mutants.*.run", "caught_as_expected.*.first")


def in_each_run(*fields: str) -> tuple[str, ...]:
    return tuple(f"{run}.{field}" for run in RUNS for field in fields)


RESULT_SHAPE = hj.Shape(
    # A run's schedule is the schedule's loader's (above); its history is judged, not loaded.
    free=(*in_each_run("schedule", "history"), "mutants.*.schedule",
          "scenarios.*.outcome_by_boundary", "caught_as_expected.*.checkers"),  # any labels
    optional=("version", "lacks", "seed", "profile", "shard", "duration_s", "wall_s", "mutants",
              "caught_as_expected", "scenarios.*.outcome_by_boundary", "killpoint_version",
              "engine_version", "command", "campaign_dir",
              *in_each_run("final_reason", "crashed_at", "controls", "schedule_file", "history",
                           "measures.*", "verdicts.*.summary", "verdicts.*.evidence",
                           "verdicts.*.refs"),
              "mutants.*.description", "mutants.*.checker", "mutants.*.runs_to_detection",
              "mutants.*.found_by", "mutants.*.seconds_to_detection", "mutants.*.schedule",
              "mutants.*.run"),
    nullable={"shard": "str", "wall_s": "float", "mutants.*.checker": "str",
              "killpoint_version": "str", "engine_version": "str", "command": "list",
              "campaign_dir": "str", **dict.fromkeys(in_each_run("measures.wall_s"), "float"),
              "mutants.*.runs_to_detection": "int",
              "mutants.*.found_by": "str", "mutants.*.seconds_to_detection": "float",
              "mutants.*.schedule": "dict", "mutants.*.run": "dict",
              **dict.fromkeys(in_each_run("schedule_file"), "str"),
              **dict.fromkeys(in_each_run("history"), "dict"),
              **dict.fromkeys(in_each_run("measures.unresolved_effect_age_s"), "float")},
    bounds={"version": (1, 1), "seed": (-hj.INT64, hj.INT64 - 1), "duration_s": SECONDS,
            "wall_s": SECONDS,
            "scenarios.*.runs": COUNT, "scenarios.*.violations": COUNT,
            **dict.fromkeys(in_each_run("measures.*_s"), SECONDS),
            **dict.fromkeys(in_each_run("measures.*", "verdicts.*.refs.*.index"), COUNT),
            "mutants.*.runs_to_detection": COUNT, "mutants.*.seconds_to_detection": SECONDS,
            "caught_as_expected.*.runs": COUNT, "caught_as_expected.*.violating": COUNT},
    enums={**dict.fromkeys(in_each_run("kind"), frozenset({"clean", "single", "double", "pair",
                                                           "network", "named", "generated",
                                                           "replay"})),
           **dict.fromkeys(in_each_run("valid", "verdicts.*.valid"), frozenset({"unknown"})),
           **dict.fromkeys(in_each_run("verdicts.*.refs.*.kind"),
                           frozenset({"request", "checkpoint", "hit", "worker", "effect",
                                      "tamper"})),
           "mutants.*.found_by": frozenset({"plan", "exploration"})},
)  # fmt: skip
broken_results = st.deferred(lambda: hj.broken(RESULT_DOC, RESULT_SHAPE).map(hj.encode))


def result_with(**fields: Any) -> bytes:
    return hj.encode({**RESULT_DOC, **fields})


def measures_with(**fields: Any) -> bytes:
    run = RESULT_DOC["runs"][0]
    return result_with(runs=[{**run, "measures": {**run["measures"], **fields}}])


@fuzz.scaled(2)
@given(data=broken_results)
@example(data=measures_with(deaths=-1))  # a negative count, merged and reported
@example(data=measures_with(recovery_clock_s=float("nan")))  # NaN in the report's figures
@example(data=measures_with(recovery_clock_s=1.7e308))  # overflowed the report's log axis
@example(data=result_with(duration_s=float("inf")))
@example(data=result_with(seed="7"))  # a number read from a string
@example(data=result_with(version=1.0))
def test_a_broken_result_is_one_clear_error(data: bytes, file: File) -> None:
    fuzz.tried()
    with pytest.raises(KillpointError):
        load_result(file(data))


@fuzz.scaled(0.4)
@given(data=broken_results | any_bytes)
def test_merging_a_bad_result_is_one_line_exit_2_and_creates_nothing(
    data: bytes, file: File
) -> None:
    fuzz.tried()
    refused_by_the_cli("merge", str(file(data)), outputs=("--report", "--junit", "--out"))


def bounded(doc: hj.Doc, shape: hj.Shape) -> list[tuple[hj.Path, tuple[Any, Any]]]:
    """Each bounded number of `doc` and its two ends."""
    ends = []
    for path, value in hj.nodes(doc, shape):
        bounds = hj.lookup(path, shape.bounds)
        if bounds is not None and hj.kind_of(value) in ("int", "float"):
            integral = hj.kind_of(value) == "int"
            low, high = bounds
            assert low is not None and high is not None, path  # every result number is bounded
            ends.append((path, (int(low), int(high)) if integral else (float(low), float(high))))
    return ends


RESULT_ENDS = bounded(RESULT_DOC, RESULT_SHAPE)


@st.composite
def at_the_ends(draw: st.DrawFn) -> hj.Doc:
    """The sample result with a few of its numbers at an end of their range."""
    doc = RESULT_DOC
    for index in draw(st.lists(st.integers(0, len(RESULT_ENDS) - 1), max_size=6, unique=True)):
        path, ends = RESULT_ENDS[index]
        doc = hj.replace(doc, path, ends[draw(st.integers(0, 1))])
    return doc


@fuzz.scaled(1)
@given(doc=at_the_ends())
def test_a_result_that_loads_merges_and_sums_up(doc: hj.Doc, file: File) -> None:
    """What the loader lets through, `merge` takes: numbers at the ends of their ranges are
    merged, summed up and written as JUnit without an exception."""
    fuzz.tried()
    merged = merge_results([load_result(file(hj.encode(doc)))])
    summary_json(merged)
    junit_xml(merged)


@pytest.mark.parametrize(("end", "every"), [(0, 1), (1, 2)])
def test_a_result_at_the_ends_of_its_ranges_renders_a_report(
    end: int, every: int, file: File, tmp_path: Path
) -> None:
    """Every number at its lowest, then every other one at its highest beside the sample's own
    (a render takes too long to fuzz): a recovery time of 1.7e308 s beside one of a few
    seconds overflowed the report's log axis (OverflowError)."""
    doc = RESULT_DOC
    for path, ends in RESULT_ENDS[::every]:
        doc = hj.replace(doc, path, ends[end])
    write_html(merge_results([load_result(file(hj.encode(doc)))]), tmp_path / "report.html")
