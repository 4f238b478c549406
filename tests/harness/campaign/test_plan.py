"""The pure plan, on hand-built recordings: what runs, in which order, under which name.

No world runs here: a recording is a `History` written by hand (boundary hits with the journal
position each saw, the requests the services saw), and a single crash's recovery is another.
The scenarios are catalogue ones renamed, since the plan reads only a scenario's name and its
named cases.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace

from killpoint.contract import boundaries as b
from killpoint.fake_services.faults import FaultMode
from killpoint.harness.campaign.plan import (
    Plan,
    PlannedRun,
    PlanOptions,
    Recovery,
    Risk,
    clean,
    crash_risk,
    doubles,
    in_shard,
    interleavings,
    named,
    network,
    point,
    recovery_only,
    singles,
    targets,
)
from killpoint.harness.history import History
from killpoint.harness.scenario import NamedCase, Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave
from tests.support.plans import (
    RANKED,
    RECORDING,
    SAGA,
    history_of,
    recovered,
    scenario_named,
)


def _position(run: PlannedRun) -> int:
    return int(run.schedule.run_id.split("-")[1])


def _unfold(plan: Plan, runs: Iterator[PlannedRun], recordings: dict[str, History]) -> list[str]:
    """Drive a plan as a campaign would, observing hand-built histories; the run ids it made.
    The recovery of single `single-<n>` has n + 2 hits."""
    made = []
    for run in runs:
        made.append(f"{run.scenario.name}/{run.schedule.run_id}")
        if run.kind == "clean":
            plan.observe(run, recordings[run.scenario.name])
        elif run.kind == "single":
            plan.observe(run, recovered(run, _position(run) + 2))
    return made


def test_a_hit_after_a_mutating_request_reached_a_service_is_crashed_first() -> None:
    """The same unknown boundary three times; a request lands between the second and third."""
    hits = [(0, "s", "vendor.x", 0), (0, "s", "vendor.x", 0), (0, "s", "vendor.x", 1)]
    recording = history_of("s", hits, [("cms", "create_post")])
    assert crash_risk(recording) == [Risk.PROTOCOL, Risk.PROTOCOL, Risk.DELIVERED]
    ranked = singles(scenario_named("s"), recording)
    assert [r.schedule.run_id for r in ranked] == ["single-2", "single-0", "single-1"]
    assert ranked[0].schedule.crashes == (
        HitPoint(worker=0, step="s", boundary="vendor.x", occurrence=3),
    )


def test_a_read_delivers_nothing_and_the_risks_rank_delivered_protocol_routine() -> None:
    ranked = singles(SAGA, RECORDING)
    assert [_position(r) for r in ranked] == RANKED
    assert crash_risk(RECORDING)[7] is Risk.ROUTINE  # the verify read's request changed nothing
    assert all(r.kind == "single" and r.hit == RECORDING.hits[_position(r)] for r in ranked)
    assert [r.risk for r in ranked] == sorted(crash_risk(RECORDING))


def test_recovery_hits_of_later_workers_are_not_crashed_as_singles() -> None:
    recording = history_of("s", [(0, "a", b.STEP_BEGIN, 0), (1, "a", b.STEP_BEGIN, 0)])
    assert [r.hit.worker for r in singles(scenario_named("s"), recording) if r.hit] == [0]


def _recoveries(*lengths: int) -> list[Recovery]:
    """Recoveries of single crashes `single-0`, `single-1`, … with these numbers of hits."""
    return [
        Recovery(
            FaultSchedule(
                scenario="saga", run_id=f"single-{n}", crashes=(point(RECORDING.hits[n]),)
            ),
            tuple(
                HitPoint(worker=1, step="s", boundary=b.STEP_BEGIN, occurrence=k + 1)
                for k in range(hits)
            ),
        )
        for n, hits in enumerate(lengths)
    ]


def test_pairs_and_doubles_follow_the_first_crash_in_hit_order() -> None:
    made = _recoveries(2, 1, 3)
    ranked = [made[2], made[0], made[1]]  # as a campaign runs its singles: by risk
    options = PlanOptions()
    double = list(doubles(SAGA, ranked, options, singles_total=3))
    assert [r.schedule.run_id for r in double] == [
        "double-0-0",
        "double-0-1",
        "double-1-0",
        "double-2-0",
        "double-2-1",
        "double-2-2",
    ]
    assert double[3].schedule.crashes == (made[2].single.crashes[0], made[2].hits[0])
    pairs = list(interleavings(SAGA, ranked, options, singles_total=3))
    assert [r.schedule.run_id for r in pairs] == ["pair-0-1", "pair-0-2", "pair-1-1"] + [
        f"pair-2-{k}" for k in (1, 2, 3)
    ]
    assert pairs[-1].schedule.interleave == Interleave(
        after_worker=0, switch_at=(0, 3), pause_expires_lease=True
    )
    assert {r.kind for r in pairs} == {"pair"} and {r.kind for r in double} == {"double"}


def test_the_double_sample_is_seeded_and_drawn_per_single() -> None:
    """Beyond the limit, each single's second crashes are a seeded sample of its recovery's hits:
    the same seed, the same sample, whichever other singles there are (so a shard makes the
    pairs the whole campaign makes of its own singles)."""
    made = _recoveries(30, 30, 30, 30)
    options = PlanOptions(double_limit=8)  # two per single of four

    def chosen(recoveries: list[Recovery], opts: PlanOptions = options) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for run in doubles(SAGA, recoveries, opts, singles_total=4):
            found.setdefault(run.schedule.run_id.rsplit("-", 1)[0], []).append(run.schedule.run_id)
        return found

    whole = chosen(made)
    assert all(len(ids) == 2 for ids in whole.values()) and len(whole) == 4
    assert chosen(made) == whole  # seeded: the same again
    assert chosen([made[1], made[3]]) == {k: whole[k] for k in ("double-1", "double-3")}
    picked = {tuple(i.rsplit("-", 1)[1] for i in ids) for ids in whole.values()}
    assert len(picked) > 1  # seeded per single: not one sample for all
    other = chosen(made, replace(options, seed=1))
    assert other != whole and all(len(ids) == 2 for ids in other.values())


def test_a_shard_takes_every_nth_run_it_may_split_and_every_recording() -> None:
    recordings = {"saga": RECORDING, "other": RECORDING.model_copy(update={"scenario": "other"})}
    chosen = [SAGA, scenario_named("other")]
    options = PlanOptions(double_limit=20)
    whole_plan = Plan(chosen, options)
    whole = _unfold(whole_plan, whole_plan.campaign(), recordings)
    splittable = [r for r in whole if "/single-" in r or "/net-" in r]
    assert len(splittable) == 2 * (11 + 11)
    union: set[str] = set()
    for i in (1, 2, 3):
        plan = Plan(chosen, options, shard=(i, 3))
        part = _unfold(plan, plan.campaign(), recordings)
        assert [r for r in part if "/single-" in r or "/net-" in r] == splittable[i - 1 :: 3]
        assert [r for r in part if r.endswith("/clean")] == ["saga/clean", "other/clean"]
        singles_made = {r.split("-")[1] for r in part if "/single-" in r and r.startswith("saga")}
        assert {
            r.split("-")[1] for r in part if "/double-" in r and r.startswith("saga")
        } == singles_made
        union |= set(part)
    assert union == set(whole)
    assert [in_shard(k, (2, 3)) for k in range(6)] == [False, True, False, False, True, False]
    assert all(in_shard(k, None) for k in range(3))


def test_the_campaign_order_is_scenario_by_scenario_and_phase_by_phase() -> None:
    plan = Plan([SAGA], PlanOptions(double_limit=11))
    made = [
        r.split("/")[1].split("-")[0] for r in _unfold(plan, plan.campaign(), {"saga": RECORDING})
    ]
    kinds = ["clean"] + ["single"] * 11 + ["pair"] * 11 + ["pause"] * 11 + ["double"] * 11
    assert made == kinds + ["net"] * 11  # each recovery reconciles first: one pause each


def test_interleavings_only_in_process() -> None:
    for tier, expected in (("inprocess", 1), ("real", 0)):
        plan = Plan([SAGA], PlanOptions(tier=tier, double_limit=11))  # type: ignore[arg-type]
        made = _unfold(plan, plan.campaign(), {"saga": RECORDING})
        assert len([r for r in made if "/pair-" in r]) == 11 * expected, tier
        assert len([r for r in made if "/pause-" in r]) == 11 * expected, tier
        assert len([r for r in made if "/double-" in r]) == 11, tier


def _case(name: str, schedule: FaultSchedule) -> NamedCase:
    return NamedCase(name, "seed row", schedule, "recovers", lambda history: None)


def test_a_named_two_worker_case_runs_in_either_tier() -> None:
    pair = Interleave(after_worker=0, switch_at=(0,))
    both = FaultSchedule(scenario="cases", run_id="case-both")
    two = FaultSchedule(scenario="cases", run_id="case-two-workers", interleave=pair)
    scenario = scenario_named("cases", _case("both", both), _case("two", two))
    inprocess = list(named(scenario, PlanOptions()))
    assert [r.schedule.run_id for r in inprocess] == ["case-both", "case-two-workers"]
    assert all(r.kind == "named" and r.expect is not None for r in inprocess)
    real = list(named(scenario, PlanOptions(tier="real")))
    assert [r.schedule.run_id for r in real] == ["case-both", "case-two-workers"]
    plan = Plan([scenario], PlanOptions(tier="real", named=False))
    assert not [r for r in _unfold(plan, plan.campaign(), {"cases": RECORDING}) if "case-" in r]


def test_each_mutating_request_meets_each_network_mode_duplicates_only_where_deduped() -> None:
    recording = history_of(
        "s",
        [],
        [
            ("payments", "create_charge"),
            ("payments", "charge_by_key"),  # a read: no fault
            ("mailer", "send"),
            ("payments", "create_charge"),
        ],
    )
    runs = list(network(scenario_named("s"), recording))
    rules = [r.schedule.network.rules[0] for r in runs]
    assert [r.schedule.run_id for r in runs] == [f"net-{n}" for n in range(len(runs))]
    assert [(r.operation, r.occurrence) for r in rules] == (
        [("create_charge", 1)] * 6 + [("send", 1)] * 5 + [("create_charge", 2)] * 6
    )
    duplicated = {r.operation for r in rules if r.mode is FaultMode.DUPLICATE_DELIVERY}
    assert duplicated == {"create_charge"}
    found = targets(recording)
    assert [(t.service, t.operation, t.count) for t in found] == [
        ("payments", "create_charge", 2),
        ("mailer", "send", 1),
    ]
    assert found[0].modes() == tuple(r.mode for r in rules[:6])


def test_recovery_only_hits_are_the_new_ones_first_seen_first() -> None:
    first = [point(h) for h in RECORDING.hits]
    reconcile = HitPoint(worker=1, step="charge", boundary=b.RECONCILE_LOOKED_UP)
    again = HitPoint(worker=1, step="charge", boundary=b.STEP_BEGIN)  # worker 0 hits it too
    resolved = HitPoint(worker=1, step="charge", boundary=b.RECONCILE_RESOLVED)
    recoveries = [
        Recovery(FaultSchedule(scenario="saga", run_id="single-3"), (again, reconcile)),
        Recovery(FaultSchedule(scenario="saga", run_id="single-4"), (reconcile, resolved)),
    ]
    assert recovery_only(first, recoveries) == [point(reconcile), point(resolved)]


def test_smallest_first_runs_each_phase_over_every_scenario_singles_by_risk() -> None:
    other = history_of(
        "other",
        [(0, "a", b.STEP_BEGIN, 0), (0, "a", b.RESPONSE_RECEIVED, 1)],
        [("cms", "create_post")],
    )
    case = _case("c", FaultSchedule(scenario="other", run_id="case-c"))
    chosen = [SAGA, scenario_named("other", case)]
    plan = Plan(chosen, PlanOptions(double_limit=4))
    made = _unfold(plan, plan.smallest_first(), {"saga": RECORDING, "other": other})
    assert made[:3] == ["saga/clean", "other/clean", "other/case-c"]
    singles_made = [r for r in made if "/single-" in r]
    delivered = ["saga/single-3", "saga/single-9", "other/single-1"]
    assert singles_made[:3] == delivered  # every scenario's lost-response windows first
    assert singles_made[-1] == "other/single-0"  # a routine hit of the second scenario, last
    phases = [r.split("/")[1].split("-")[0] for r in made]
    order = ["clean", "case", "single", "net", "pair", "pause", "double"]
    assert phases == sorted(phases, key=order.index)
    assert len(made) == len(set(made))


def test_the_plan_needs_no_world() -> None:
    """Planning is pure: importing it loads neither the world, the runner nor any engine."""
    code = (
        "import sys, killpoint.harness.campaign.plan; "
        "print(sorted(m for m in sys.modules if m.startswith(('killpoint.harness.run.world', "
        "'killpoint.harness.run.runner', 'killpoint.harness.run.killswitch', "
        "'killpoint.reference', "
        "'sqlalchemy'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_plan_expects_the_runs_it_makes_closely_then_exactly() -> None:
    """Once the recordings are in, the expected count is close; once every single crash's
    recovery is seen, it is the count of runs the campaign makes, sharded or not."""
    case = _case("case", FaultSchedule(scenario="other", run_id="case"))
    chosen = [SAGA, scenario_named("other", case)]
    recordings = {"saga": RECORDING, "other": RECORDING.model_copy(update={"scenario": "other"})}
    for shard in (None, (1, 3), (3, 3)):
        plan = Plan(chosen, PlanOptions(double_limit=40), shard)
        for scenario in chosen:
            plan.observe(clean(scenario), recordings[scenario.name])
        guessed = plan.expected_runs(extra=2)
        made = _unfold(plan, plan.campaign(extra_runs(chosen, 2)), recordings)
        assert plan.expected_runs(extra=2) == len(made), shard
        # each hand-built recovery reconciles, a window the recording lacks: its pause is not
        # guessed here (test_plan_pauses guesses them from a recording with windows)
        unpaused = [r for r in made if "/pause-" not in r]
        assert abs(guessed - len(unpaused)) <= 0.15 * len(unpaused), (shard, guessed, len(made))


def extra_runs(chosen: list[Scenario], n: int) -> list[PlannedRun]:
    return [
        PlannedRun(chosen[0], "generated", FaultSchedule(scenario="saga", run_id=f"extra-{k}"))
        for k in range(n)
    ]
