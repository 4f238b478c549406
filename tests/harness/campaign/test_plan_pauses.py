"""The plan's pauses, on hand-built recoveries: two workers after a single crash, the first paused
right after a hit where a stale owner can still act (`STALE_WINDOWS`) of its recovery's first
step, the second running to its end. Where they land, how many, under which name and seed, and
how a shard shares them; no world runs here.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from killpoint.contract import boundaries as b
from killpoint.harness.campaign.execute import CampaignConfig
from killpoint.harness.campaign.plan import (
    STALE_WINDOWS,
    Plan,
    PlannedRun,
    PlanOptions,
    Recovery,
    clean,
    pauses,
    point,
    stale_windows,
)
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave
from tests.support.plans import history_of, scenario_named

SHOP = scenario_named("shop")
# one effect step (publish) between two pure ones, as the recording's first worker passes it
STEP = [
    (None, b.LEASE_ACQUIRED),
    ("draft", b.STEP_BEGIN),
    ("draft", b.CHECKPOINT_COMMITTED),
    ("publish", b.STEP_BEGIN),
    ("publish", b.INTENT_BUILT),
    ("publish", b.INTENT_COMMITTED),
    ("publish", b.STARTED_COMMITTED),
    ("publish", b.RESPONSE_RECEIVED),
    ("publish", b.RESPONSE_READ),
    ("publish", b.RECEIPT_COMMITTED),
    ("publish", b.CHECKPOINT_COMMITTED),
    ("verify", b.STEP_BEGIN),
    ("verify", b.READ_RETURNED),
    ("verify", b.VERIFY_READ),
    ("verify", b.CHECKPOINT_COMMITTED),
]
RECORDING = history_of("shop", [(0, step, boundary, 0) for step, boundary in STEP])
# a recovery that reconciles publish first: its lookup's answer read, then looked up
RECONCILING = [
    (None, b.LEASE_ACQUIRED),
    ("publish", b.READ_RETURNED),
    ("publish", b.RECONCILE_LOOKED_UP),
    ("publish", b.RECONCILE_RESOLVED),
    *STEP[3:],
]


def _hits(hits: list[tuple[str | None, str]], worker: int = 1) -> tuple[HitPoint, ...]:
    return tuple(
        point(h, worker) for h in history_of("shop", [(worker, s, bd, 0) for s, bd in hits]).hits
    )


def _single(n: int) -> FaultSchedule:
    return FaultSchedule(scenario="shop", run_id=f"single-{n}", crashes=(point(RECORDING.hits[n]),))


def _recovery(n: int) -> Recovery:
    """single-n's recovery: from the last checkpoint before the crash on. A crash with the post
    started and not sent: the lookup finds it absent, it is sent again; sent and not recorded:
    the lookup finds it, it is not; recorded: nothing to reconcile or send."""
    if n == 6:
        return Recovery(_single(n), _hits(RECONCILING))
    if n in (7, 8):
        found = [*RECONCILING[:4], STEP[3], STEP[10]]  # reconciled, the step checkpointed
        return Recovery(_single(n), _hits([*found, *STEP[11:]]))
    if n == 9:
        return Recovery(_single(n), _hits([STEP[0], STEP[3], *STEP[10:]]))
    start = max((k + 1 for k in (2, 10, 14) if k <= n), default=0)
    return Recovery(_single(n), _hits([STEP[0], *STEP[max(start, 1) :]]))


def _ids(runs: list[PlannedRun]) -> list[str]:
    return [r.schedule.run_id for r in runs]


def test_a_pause_lands_right_after_each_window_of_the_recoverys_first_step() -> None:
    """Reconciling publish: the lookup (its read and looked-up in a row: one place), publish's
    `started`, its response read; not the verify read of the next step."""
    rec = _recovery(6)  # the post started, not sent: found absent, sent again
    assert stale_windows(rec.hits) == [2, 7, 9]
    assert [rec.hits[n].boundary for n in rec.stale_windows()] == [
        b.RECONCILE_LOOKED_UP,
        b.STARTED_COMMITTED,
        b.RESPONSE_READ,
    ]
    runs = list(pauses(SHOP, [rec], PlanOptions(), singles_total=len(STEP)))
    assert _ids(runs) == ["pause-6-2", "pause-6-7", "pause-6-9"]
    assert all(r.kind == "pair" for r in runs)
    assert runs[1].schedule.crashes == rec.single.crashes
    assert runs[1].schedule.interleave == Interleave(
        after_worker=0, switch_at=(7,), pause_expires_lease=True
    )  # no switch back: the second worker runs to its end, then the first wakes


def test_a_recovery_that_starts_a_step_afresh_pauses_at_its_started_and_response() -> None:
    fresh = _recovery(3)  # the crash at publish's begin: publish runs afresh
    assert [fresh.hits[n].boundary for n in fresh.stale_windows()] == [
        b.STARTED_COMMITTED,
        b.RESPONSE_READ,
    ]
    assert _recovery(7).stale_windows() == [2]  # sent: found, nothing sent again
    assert _recovery(9).stale_windows() == []  # recorded: nothing to reconcile or send
    assert _recovery(1).stale_windows() == []  # the first step, draft, reaches nothing outside
    assert _recovery(12).stale_windows() == [2]  # the verify read, of the step it resumes in


def test_pauses_are_windows_where_the_next_action_can_reach_the_world() -> None:
    windows = {b.STARTED_COMMITTED, b.READ_RETURNED, b.RECONCILE_LOOKED_UP, b.RESPONSE_READ}
    assert windows == STALE_WINDOWS
    between_steps = {b.LEASE_ACQUIRED, b.STEP_BEGIN, b.CHECKPOINT_COMMITTED, b.CHECKPOINT_BUILT}
    assert not STALE_WINDOWS & between_steps  # a fenced write next: the pairs at the lease


def _windowed(n: int, windows: int) -> Recovery:
    """single-n's recovery: `windows` effects started one after another in one long step."""
    effect = [("batch", b.STARTED_COMMITTED), ("batch", b.STEP_BEGIN)]
    return Recovery(_single(n), _hits([(None, b.LEASE_ACQUIRED), *effect * windows]))


def test_beyond_the_limit_the_pauses_are_a_seeded_sample_per_single() -> None:
    made = [_windowed(n, 30) for n in range(4)]
    options = PlanOptions(double_limit=8)  # two per single of four

    def chosen(recoveries: list[Recovery], opts: PlanOptions = options) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for run in pauses(SHOP, recoveries, opts, singles_total=4):
            single, at = run.schedule.run_id.removeprefix("pause-").split("-")
            found.setdefault(single, []).append(int(at))
            assert run.schedule.interleave is not None
            assert run.schedule.interleave.switch_at == (int(at),)
        return found

    whole = chosen(made)
    assert len(whole) == 4 and all(len(at) == 2 for at in whole.values())
    assert all(made[0].hits[n].boundary == b.STARTED_COMMITTED for at in whole.values() for n in at)
    assert chosen(made) == whole  # seeded: the same again
    assert chosen([made[3], made[1]]) == {k: whole[k] for k in ("1", "3")}  # per single
    assert len({tuple(at) for at in whole.values()}) > 1
    assert chosen(made, replace(options, seed=1)) != whole


def test_no_pauses_when_asked_for_none_or_without_pairs() -> None:
    made = [_recovery(7)]
    for options in (
        PlanOptions(pauses=False),
        PlanOptions(interleave=False),
        PlanOptions(tier="real"),  # two workers of the real tier: for DBOS alone
    ):
        assert list(pauses(SHOP, made, options, singles_total=len(STEP))) == [], options
    assert list(pauses(SHOP, made, PlanOptions(tier="real", real_pairs=True), len(STEP)))
    config = CampaignConfig(scenarios=[], workdir=Path("x"), engine=REFERENCE, pauses=False)
    assert config.plan_options().pauses is False
    assert CampaignConfig(scenarios=[], workdir=Path("x"), engine=REFERENCE).plan_options().pauses


def _unfold(plan: Plan) -> list[str]:
    made = []
    for run in plan.campaign():
        made.append(run.schedule.run_id)
        if run.kind == "clean":
            plan.observe(run, RECORDING)
        elif run.kind == "single":
            n = int(run.schedule.run_id.removeprefix("single-"))
            plan.observe(run, _ran(_recovery(n)))
    return made


def _ran(rec: Recovery) -> History:
    return history_of("shop", [(1, h.step, h.boundary, 0) for h in rec.hits])


def test_the_pauses_follow_the_pairs_at_the_lease_and_a_shard_makes_those_of_its_singles() -> None:
    options = PlanOptions(double_limit=60, network=False)
    whole = _unfold(Plan([SHOP], options))
    phases = [r.split("-")[0] for r in whole]
    assert phases.index("pause") > max(i for i, p in enumerate(phases) if p == "pair")
    assert phases.index("double") > max(i for i, p in enumerate(phases) if p == "pause")
    paused = [r for r in whole if r.startswith("pause-")]
    assert {r.split("-")[1] for r in paused} == {str(n) for n in range(2, 14)} - {"9"}
    union: set[str] = set()
    for i in (1, 2, 3):
        part = _unfold(Plan([SHOP], options, shard=(i, 3)))
        mine = {r.removeprefix("single-") for r in part if r.startswith("single-")}
        assert {r for r in part if r.startswith("pause-")} == {
            r for r in paused if r.split("-")[1] in mine
        }
        union |= set(part)
    assert union == set(whole)


def test_the_plan_expects_its_pauses_closely_then_exactly() -> None:
    """Guessed from the recording's windows in each crash's step (its reads again, its effects
    from the crash on) and a lookup where the crash left an effect in doubt (found or not: a
    guess); then counted from the recoveries seen."""
    for shard in (None, (2, 3)):
        counts = {}
        for paused in (True, False):
            plan = Plan([SHOP], PlanOptions(network=False, pauses=paused), shard)
            plan.observe(clean(SHOP), RECORDING)
            guessed = plan.expected_runs()
            made = _unfold(plan)
            assert plan.expected_runs() == len(made), (shard, paused)
            counts[paused] = (guessed, len(made))
        (guessed_on, made_on), (guessed_off, made_off) = counts[True], counts[False]
        pauses_made = made_on - made_off
        assert pauses_made > 0
        assert abs(guessed_on - guessed_off - pauses_made) <= 0.15 * pauses_made + 1, shard
