"""The real-tier pass: which deaths it makes real, on hand-built recordings (`test_plan`'s), why
a campaign makes none, and how a campaign runs it (a real world beside its own, the tier kept
in the schedule it saves)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from killpoint.contract import boundaries as b
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.real_pass import FORKED, pass_size, real_pass, skipped
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.schedule import FaultSchedule, HitPoint, load_schedule
from killpoint.scenarios import CATALOGUE
from tests.support.plans import history_of

SCENARIO = CATALOGUE["order_saga"]
SENT = b.RESPONSE_RECEIVED
COMMITTED = b.CHECKPOINT_COMMITTED
CHARGE, SHIP = ("payments", "create_charge"), ("publisher", "publish")


def _recording(charges: int = 2) -> object:
    """Worker 0: the lease, then `charges` charges (a response received after each, then the
    step's commit), then a shipment and its commit; journal positions as the requests went."""
    hits: list[tuple[int, str | None, str, int]] = [(0, None, b.LEASE_ACQUIRED, 0)]
    for n in range(1, charges + 1):
        hits += [(0, "charge", b.STEP_BEGIN, n - 1), (0, "charge", SENT, n)]
        hits += [(0, "charge", COMMITTED, n)]
    hits += [(0, "ship", b.STEP_BEGIN, charges), (0, "ship", SENT, charges + 1)]
    hits += [(0, "ship", COMMITTED, charges + 1)]
    return history_of(SCENARIO.name, hits, [CHARGE] * charges + [SHIP])


def test_one_death_per_delivered_boundary_and_request_and_per_steps_commit() -> None:
    recording = _recording()
    runs = real_pass(SCENARIO, recording)  # type: ignore[arg-type]
    crashed = [r.schedule.crashes[0] for r in runs]
    assert [(c.step, c.boundary, c.occurrence) for c in crashed] == [
        ("charge", SENT, 1),  # the first charge's response in flight
        ("charge", COMMITTED, 1),  # the charge step's first commit
        ("ship", SENT, 1),  # another request at the same boundary kind: its own death
        ("ship", COMMITTED, 1),
    ]
    assert {r.kind for r in runs} == {"real"}
    assert {r.schedule.tier for r in runs} == {"real"}
    assert [r.schedule.run_id for r in runs] == ["real-2", "real-3", "real-8", "real-9"]
    assert all(c.worker == 0 for c in crashed)


def test_the_pass_is_bounded_by_kinds_not_by_hits() -> None:
    few, many = _recording(2), _recording(40)
    assert len(real_pass(SCENARIO, few)) == len(real_pass(SCENARIO, many)) == 4  # type: ignore[arg-type]
    assert pass_size([SCENARIO], {SCENARIO.name: many}) == 4  # type: ignore[dict-item]


def test_a_routine_recording_gets_a_death_at_each_commit_only() -> None:
    hits = [(0, None, b.LEASE_ACQUIRED, 0), (0, "a", b.STEP_BEGIN, 0), (0, "a", COMMITTED, 0)]
    hits += [(0, "b", b.STEP_BEGIN, 0), (0, "b", COMMITTED, 0), (0, "b", COMMITTED, 0)]
    runs = real_pass(SCENARIO, history_of(SCENARIO.name, hits))
    assert [(r.hit.step, r.hit.occurrence) for r in runs if r.hit] == [("a", 1), ("b", 1)]


def test_why_a_campaign_makes_no_pass() -> None:
    assert skipped(REFERENCE, "inprocess", True) is None
    assert "--no-real-pass" in (skipped(REFERENCE, "inprocess", False) or "")
    assert "real tier" in (skipped(REFERENCE, "real", True) or "")
    unforkable = replace(REFERENCE, name="unforkable", lacks=REFERENCE.lacks | {FORKED})
    reason = skipped(unforkable, "inprocess", True)
    assert reason is not None and "unforkable" in reason and FORKED in reason
    command = replace(REFERENCE, name="a command", own_process=True)
    assert "every death is a SIGKILL" in (skipped(command, "inprocess", True) or "")


def _config(root: Path, **changes: object) -> CampaignConfig:
    """A campaign of the email scenario with every phase but the singles off."""
    off: dict[str, object] = {"double": False, "interleave": False, "network": False}
    off |= {"named": False}
    off |= {"deploys": False, "explore": "0", "operators": False}
    return CampaignConfig(
        scenarios=[CATALOGUE["email"]],
        workdir=root,
        engine=REFERENCE,
        **(off | changes),  # type: ignore[arg-type]
    )


def test_a_campaign_runs_the_pass_after_the_singles_and_not_when_told(tmp_path: Path) -> None:
    counted: list[int] = []
    with Campaign(_config(tmp_path / "on", on_plan=counted.append)) as campaign:
        result = campaign.run()
        assert campaign._real is not None  # opened for the pass, beside its own world
    kinds = [r.kind for r in result.runs]
    real = [r for r in result.runs if r.kind == "real"]
    assert real and kinds.index("real") > max(i for i, k in enumerate(kinds) if k == "single")
    assert {r.schedule.tier for r in real} == {"real"}
    assert all(r.valid is True for r in real), [r.verdicts for r in real if r.valid is not True]
    assert counted[-1] == len(result.runs)  # progress counted the pass from the start
    with Campaign(_config(tmp_path / "off", real_pass=False)) as campaign:
        off = campaign.run()
        assert campaign._real is None  # never opened
    assert "real" not in {r.kind for r in off.runs}
    assert len(off.runs) == len(result.runs) - len(real)


def test_a_schedule_that_says_real_keeps_its_tier_in_an_in_process_campaign(
    tmp_path: Path,
) -> None:
    """A named case (or a replayed file) that requires the real tier gets it: its worker dies
    by SIGKILL, and the schedule it saves says real, so `killpoint replay FILE` does too."""
    crash = HitPoint(worker=0, step="notify", boundary=COMMITTED)
    schedule = FaultSchedule(scenario="email", run_id="needs-real", crashes=(crash,), tier="real")
    with Campaign(_config(tmp_path)) as campaign:
        result, history = campaign.judge(CATALOGUE["email"], schedule, "named")
    assert result.schedule.tier == "real"
    assert history.workers[0].end == "sigkill"
    saved = tmp_path / "saved.json"
    saved.write_text(result.schedule.model_dump_json())
    assert load_schedule(saved).tier == "real"
