"""Hypothesis over the loaders of what users hand killpoint: fault schedules (`killpoint
replay`), engine references, scenario catalogues (by name and by entry point) and campaign
results (`killpoint merge`).

Whatever a file or an entry point holds, the outcome is the loaded thing or one
`KillpointError`; through the CLI, one line on stderr, exit status 2 and nothing created. A
valid document broken the ways its schema forbids (`tests.hostile_json`) is always the error.
Each input is counted (`tests/fuzz.py`).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from killpoint.fake_services.faults import PARAMS, SERVICES, FaultMode, FaultPlan, FaultRule
from killpoint.harness import schedule as fs
from killpoint.harness.catalogue import GROUP, Catalogue, gather, installed
from killpoint.harness.cli import app
from killpoint.harness.contract.errors import KillpointError
from killpoint.harness.contract.records import Versions
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.merge import merge_results
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import MAX_SECONDS, CampaignResult, load_result
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, load_schedule
from killpoint.harness.tampering import TAMPER_KINDS
from killpoint.reports import summary_json, write_html
from killpoint.reports.junit import junit_xml
from tests import fuzz
from tests import hostile_json as hj
from tests.conftest import TEST_KEY
from tests.reports.campaigns import sample_campaign

# -- files, and the CLI that reads them --------------------------------------------------------

File = Callable[[bytes], Path]


@pytest.fixture
def file(tmp_path: Path) -> File:
    """The test's one input file, rewritten with each example's bytes."""

    def holding(data: bytes) -> Path:
        path = tmp_path / "input.json"
        path.write_bytes(data)
        return path

    return holding


def refused_by_the_cli(*args: str, outputs: tuple[str, ...] = ()) -> None:
    """`killpoint ARGS…` in a fresh folder: one line on stderr, exit 2, nothing created there
    (`outputs` are flags whose files it was asked to write)."""
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})
    with tempfile.TemporaryDirectory() as folder:
        here = Path(folder)
        asked = [part for flag in outputs for part in (flag, str(here / flag.strip("-")))]
        work = ["--workdir", str(here / "work")] if args[0] != "merge" else []
        result = runner.invoke(app, [*args, *work, *asked])
        assert result.exit_code == 2, (result.exception, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stdout + result.stderr
        assert list(here.iterdir()) == []


any_bytes = st.binary(max_size=200) | hj.json_values.map(lambda v: json.dumps(v).encode())


@pytest.mark.parametrize(
    ("load", "model"), [(load_schedule, FaultSchedule), (load_result, CampaignResult)]
)
@fuzz.scaled(2)
@given(data=any_bytes)
def test_any_file_is_loaded_or_one_clear_error(
    data: bytes, file: File, load: Callable[[Path], object], model: type
) -> None:
    """A fault schedule (`replay`) or a campaign result (`merge`), whatever the file holds."""
    fuzz.tried()
    try:
        assert isinstance(load(file(data)), model)
    except KillpointError as exc:
        assert "\n" not in str(exc)


# -- fault schedules ---------------------------------------------------------------------------

SCHEDULE = FaultSchedule(
    scenario="order_saga",
    run_id="fuzz-1",
    engine="reference",
    crashes=(fs.HitPoint(worker=0, step="charge", boundary="effect.started", occurrence=2),),
    network=FaultPlan(
        rules=(
            FaultRule(service="payments", operation="create_charge", occurrence=1,
                      mode=FaultMode.SLOW, params={"delay_s": 2.0}),
            FaultRule(service="publisher", operation="publish", mode=FaultMode.WITHHELD_VISIBILITY,
                      params={"after_reads": 2, "after_s": 5.0}),
            FaultRule(service="payments", operation="create_charge",
                      mode=FaultMode.DUPLICATE_DELIVERY, params={"copies": 2}),
        ),
        seed="s",
    ),
    clock_jumps=(fs.ClockJump(at=fs.HitPoint(worker=1, step=None, boundary="lease.acquired"),
                           seconds=90.0),),
    tamper=(fs.Tamper(after_worker=0, kind="flip_byte"),),
    deploys=(fs.Deploy(from_worker=1, versions=Versions(plan="p", prompt="q", model_contract="m",
                                                     tool_schema="t")),),
    redeliver_start=True,
    interleave=fs.Interleave(after_worker=0, switch_at=(1, 3), pause_expires_lease=True),
)  # fmt: skip
SCHEDULE_DOC: hj.Doc = json.loads(SCHEDULE.model_dump_json())
WORKER = (0, fs.MAX_WORKERS - 1)
RULES = "network.rules.*"
SCHEDULE_SHAPE = hj.Shape(
    optional=("version", "tier", "engine", "crashes", "network", "clock_jumps", "downtime_s",
              "tamper", "deploys", "redeliver_start", "redeliver_after_end", "interleave",
              "max_workers", "*.occurrence", "network.*", f"{RULES}.operation",
              f"{RULES}.params", f"{RULES}.params.after_*", f"{RULES}.params.copies",
              "interleave.switch_at", "interleave.pause_expires_lease"),
    nullable={"engine": "str", "*.step": "str", f"{RULES}.operation": "str",
              f"{RULES}.occurrence": "int", "interleave": "dict"},
    bounds={"version": (1, 1), "*.worker": WORKER, "*after_worker": WORKER,
            "deploys.*.from_worker": (1, fs.MAX_WORKERS - 1), "*.occurrence": (1, fs.MAX_HITS),
            "clock_jumps.*.seconds": (0, fs.YEAR_S), "downtime_s": (0, fs.YEAR_S),
            "interleave.switch_at.*": (0, fs.MAX_HITS), "max_workers": (1, fs.MAX_WORKERS),
            **{f"{RULES}.params.{name}": (low, high)
               for params in PARAMS.values() for name, (_, low, high) in params.items()}},
    enums={"tier": frozenset({"inprocess", "real"}), f"{RULES}.mode": frozenset(FaultMode),
           f"{RULES}.service": frozenset(SERVICES), "tamper.*.kind": frozenset(TAMPER_KINDS)},
)  # fmt: skip


def unsafe_run_id(doc: hj.Doc, shape: hj.Shape) -> st.SearchStrategy[hj.Change]:
    """A run id that cannot name the replay's folder."""
    names = st.sampled_from(["", "a/b", "../../etc", "x\x00y", "\\", "é" * 101])
    return hj.setting(("run_id",), names | st.text(min_size=201))


SCHEDULE_BREAKAGES = (*hj.BREAKAGES, unsafe_run_id)
broken_schedules = st.deferred(
    lambda: hj.broken(SCHEDULE_DOC, SCHEDULE_SHAPE, SCHEDULE_BREAKAGES).map(hj.encode)
)


def schedule_with(**fields: Any) -> bytes:
    return hj.encode({**SCHEDULE_DOC, **fields})


def rule_with(**fields: Any) -> bytes:
    rules = SCHEDULE_DOC["network"]["rules"]
    return schedule_with(network={"rules": [{**rules[0], **fields}]})


@fuzz.scaled(2)
@given(data=broken_schedules)
# What the fuzzer found, each once accepted:
@example(data=schedule_with(run_id="a/b"))  # replay made a folder under a missing one: a crash
@example(data=schedule_with(run_id="x\x00"))  # … a ValueError (NUL in a path)
@example(data=schedule_with(max_workers="12"))  # a number read from a string
@example(data=schedule_with(redeliver_start=1))  # a flag read from a number
@example(data=schedule_with(version=True))  # a literal matched by equality: true == 1
@example(data=schedule_with(crashes=[{**SCHEDULE_DOC["crashes"][0], "worker": 10**6}]))
@example(data=schedule_with(crashes=[{**SCHEDULE_DOC["crashes"][0], "occurrence": 10**12}]))
@example(data=schedule_with(tamper=[{"after_worker": 10**6, "kind": "flip_byte"}]))
@example(data=schedule_with(interleave={"after_worker": 0, "switch_at": [10**12]}))
@example(data=rule_with(occurrence=10**12))
@example(data=rule_with(params={"delay_s": 1e300}))  # a slow reply that never comes
@example(data=rule_with(params={"delay_s": "2"}))  # a TypeError in the service's sleep
@example(data=rule_with(params={"delay_s": 2.0, "dely": 1}))  # a misspelt parameter, ignored
@example(data=rule_with(mode="duplicate_delivery", params={"copies": 10**9}))  # 10⁹ requests
def test_a_broken_schedule_is_one_clear_error(data: bytes, file: File) -> None:
    fuzz.tried()
    with pytest.raises(KillpointError):
        load_schedule(file(data))


def numbers(schema: dict[str, Any], node: dict[str, Any], path: str = "") -> Iterator[str]:
    """The dotted path of every number in a JSON schema that has no lower or no upper bound."""
    if "$ref" in node:
        node = schema["$defs"][node["$ref"].rpartition("/")[2]]
    for option in node.get("anyOf", ()):
        yield from numbers(schema, option, path)
    if node.get("type") in ("integer", "number") and "const" not in node:
        low = "minimum" in node or "exclusiveMinimum" in node
        high = "maximum" in node or "exclusiveMaximum" in node
        yield path + ("" if low and high else " (unbounded)")
    for name, prop in node.get("properties", {}).items():
        yield from numbers(schema, prop, f"{path}.{name}".lstrip("."))
    if "items" in node:
        yield from numbers(schema, node["items"], f"{path}.*")


def test_every_number_of_a_schedule_is_bounded_and_fuzzed_past_its_bounds() -> None:
    """Times, counts, workers, indices and each fault parameter: a bound on both sides, and
    the fuzzer's table knows each one (a field added tomorrow fails here until it is)."""
    schema = FaultSchedule.model_json_schema()
    found = list(numbers(schema, schema))
    assert [p for p in found if p.endswith("(unbounded)")] == []
    params = [f"{RULES}.params.{name}" for table in PARAMS.values() for name in table]
    assert [
        p
        for p in [*found, *params]
        if hj.lookup(tuple(p.split(".")), SCHEDULE_SHAPE.bounds) is None
    ] == []


@fuzz.scaled(0.4)
@given(data=broken_schedules | any_bytes)
@example(data=schedule_with(run_id="a/b"))
def test_replaying_a_bad_schedule_is_one_line_exit_2_and_creates_nothing(
    data: bytes, file: File
) -> None:
    fuzz.tried()
    refused_by_the_cli("replay", str(file(data)), outputs=("--history",))


# -- engine references -------------------------------------------------------------------------

# Names that cannot import a module by accident: malformed ones, and well-formed ones nothing has.
malformed_modules = st.text(max_size=12).filter(
    lambda text: not re.fullmatch(r"[A-Za-z_][\w.]*", text)
) | st.from_regex(r"kp_nothing_[a-z]{1,5}(\.[a-z]{1,3})?", fullmatch=True)
engine_refs = st.tuples(
    st.sampled_from(["", "mutant:", ".", "..", "tests."]),
    malformed_modules,
    st.sampled_from(["", ":", ":factory", ":a:b", "::"]),
).map("".join)


@fuzz.scaled(1)
@given(ref=engine_refs)
@example(ref=".:factory")  # a TypeError: a relative import without a package
def test_any_engine_reference_is_an_engine_or_one_clear_error(ref: str) -> None:
    fuzz.tried()
    try:
        assert isinstance(load_engine(ref), EngineSpec)
    except KillpointError as exc:
        assert "\n" not in str(exc)


# -- scenario catalogues -----------------------------------------------------------------------


@fuzz.scaled(2)
@given(name=st.text(max_size=20) | st.sampled_from(sorted(installed().scenarios)))
def test_any_scenario_name_is_a_scenario_or_one_clear_error(name: str) -> None:
    fuzz.tried()
    try:
        assert isinstance(installed().scenario(name), Scenario)
    except KillpointError as exc:
        assert name not in installed().scenarios and "no scenario named" in str(exc)


@fuzz.scaled(0.4)
@given(name=st.text(min_size=1, max_size=20).filter(lambda n: n not in installed().scenarios))
def test_running_an_unknown_scenario_is_one_line_exit_2_and_creates_nothing(name: str) -> None:
    fuzz.tried()
    refused_by_the_cli("run", "-s", name, outputs=("--report", "--junit", "--out"))


class Broken(Exception):
    """What a team's catalogue may raise while it is loaded."""


def _raises() -> Any:
    raise Broken("the team's catalogue is broken")


MODULE = "tests_fuzz_catalogue"
# What an entry point's target may be: a catalogue, a function returning anything, anything.
targets = st.one_of(
    hj.json_values,
    st.just(Catalogue()),
    st.builds(
        Catalogue, scenarios=st.dictionaries(st.text(max_size=3), hj.json_values, max_size=2)
    ),
    st.builds(Catalogue, mutants=st.dictionaries(st.integers(), st.none(), max_size=2)),
    st.builds(Catalogue, services=st.just(["not", "a", "mapping"])),
    st.just(_raises),
    hj.json_values.map(lambda value: lambda: value),
)
entry_values = st.sampled_from(
    [f"{MODULE}:target", f"{MODULE}:missing", MODULE, "", f"{MODULE}:target.deeper", ":x", "a b:c"]
)


@pytest.fixture
def catalogue_module() -> Iterator[types.ModuleType]:
    """A module entry points can name; each example sets its `target`."""
    module = types.ModuleType(MODULE)
    sys.modules[MODULE] = module
    yield module
    del sys.modules[MODULE]


@fuzz.scaled(2)
@given(target=targets, value=entry_values)
@example(target=_raises, value=f"{MODULE}:target")  # the team's exception, as a traceback
@example(target=[1], value=f"{MODULE}:target")  # a TypeError: 'list' object is not callable
@example(target=None, value=f"{MODULE}:missing")  # an AttributeError from the entry point
@example(
    target=Catalogue(scenarios=cast(Any, {"x": 5})), value=f"{MODULE}:target"
)  # kept, until used
def test_any_catalogue_entry_point_is_a_catalogue_or_one_clear_error(
    target: Any, value: str, catalogue_module: types.ModuleType
) -> None:
    fuzz.tried()
    setattr(catalogue_module, "target", target)  # noqa: B010
    try:
        catalogue = gather([EntryPoint("team", value, GROUP)])
    except KillpointError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(isinstance(s, Scenario) for s in catalogue.scenarios.values())
        assert all(isinstance(m, EngineSpec) for m in catalogue.mutants.values())


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
    optional=("version", "lacks", "seed", "profile", "shard", "duration_s", "mutants",
              "caught_as_expected", "scenarios.*.outcome_by_boundary",
              *in_each_run("final_reason", "crashed_at", "schedule_file", "history", "measures.*",
                           "verdicts.*.summary", "verdicts.*.evidence", "verdicts.*.refs"),
              "mutants.*.description", "mutants.*.checker", "mutants.*.runs_to_detection",
              "mutants.*.found_by", "mutants.*.seconds_to_detection", "mutants.*.schedule",
              "mutants.*.run"),
    nullable={"shard": "str", "mutants.*.checker": "str", "mutants.*.runs_to_detection": "int",
              "mutants.*.found_by": "str", "mutants.*.seconds_to_detection": "float",
              "mutants.*.schedule": "dict", "mutants.*.run": "dict",
              **dict.fromkeys(in_each_run("schedule_file"), "str"),
              **dict.fromkeys(in_each_run("history"), "dict"),
              **dict.fromkeys(in_each_run("measures.unresolved_effect_age_s"), "float")},
    bounds={"version": (1, 1), "seed": (-hj.INT64, hj.INT64 - 1), "duration_s": SECONDS,
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
