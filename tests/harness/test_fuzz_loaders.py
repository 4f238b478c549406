"""Hypothesis over the loaders of what users hand killpoint: fault schedules (`killpoint
replay`), engine references, scenario catalogues (by name and by entry point) and campaign
results (`killpoint merge`).

Whatever a file or an entry point holds, the outcome is the loaded thing or one
`KillpointError`; through the CLI, one line on stderr, exit status 2 and nothing created. A
valid document broken the ways its schema forbids is always the error.
Each input is counted (`tests/support/fuzz.py`).
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from killpoint.contract.errors import KillpointError
from killpoint.contract.records import Versions
from killpoint.fake_services.faults import PARAMS, SERVICES, FaultMode, FaultPlan, FaultRule
from killpoint.harness import schedule as fs
from killpoint.harness.catalogue import GROUP, Catalogue, gather, installed
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import CampaignResult, load_result
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, load_schedule
from killpoint.harness.tampering import TAMPER_KINDS
from tests.support import fuzz
from tests.support import hostile_json as hj
from tests.support.loader_inputs import File, any_bytes, refused_by_the_cli


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
    lies=(fs.Lie(worker=1, kind="amount"),),
    neighbours=(fs.Neighbour(kind="tenant", before_worker=1),),
)  # fmt: skip
SCHEDULE_DOC: hj.Doc = json.loads(SCHEDULE.model_dump_json())
WORKER = (0, fs.MAX_WORKERS - 1)
RULES = "network.rules.*"
SCHEDULE_SHAPE = hj.Shape(
    optional=("version", "tier", "engine", "crashes", "network", "clock_jumps", "downtime_s",
              "tamper", "deploys", "redeliver_start", "redeliver_after_end", "interleave",
              "max_workers", "*.occurrence", "network.*", f"{RULES}.operation",
              f"{RULES}.params", f"{RULES}.params.after_*", f"{RULES}.params.copies",
              "interleave.switch_at", "interleave.pause_expires_lease", "lies", "neighbours",
              "neighbours.*.before_worker"),
    nullable={"engine": "str", "*.step": "str", f"{RULES}.operation": "str",
              f"{RULES}.occurrence": "int", "interleave": "dict"},
    bounds={"version": (1, 1), "*.worker": WORKER, "*after_worker": WORKER,
            "deploys.*.from_worker": (1, fs.MAX_WORKERS - 1), "*.occurrence": (1, fs.MAX_HITS),
            "clock_jumps.*.seconds": (0, fs.YEAR_S), "downtime_s": (0, fs.YEAR_S),
            "interleave.switch_at.*": (0, fs.MAX_HITS), "max_workers": (1, fs.MAX_WORKERS),
            "neighbours.*.before_worker": WORKER,
            **{f"{RULES}.params.{name}": (low, high)
               for params in PARAMS.values() for name, (_, low, high) in params.items()}},
    enums={"tier": frozenset({"inprocess", "real"}), f"{RULES}.mode": frozenset(FaultMode),
           f"{RULES}.service": frozenset(SERVICES), "tamper.*.kind": frozenset(TAMPER_KINDS),
           "lies.*.kind": frozenset(fs.LIE_KINDS),
           "neighbours.*.kind": frozenset({"tenant", "workflow"})},
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
@example(data=schedule_with(lies=[{"worker": 1, "kind": "amount"}] * 9))  # past MAX_LIES
@example(data=schedule_with(lies=[{"worker": 1, "kind": "flattery"}]))  # no such lie
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
