"""A pause right after `started` alone exposes a worker that sends on a lapsed lease: on a
hand-written schedule the mutant whose send trusts its fenced `started` mark posts twice when
its recoverer is paused there (`single_effect` objecting) and passes when it is paused at its
lease, as the plan's pairs always paused it; the reference passes the paused schedule, refusing
to send. The default hunt catches it with a pause; without pauses (`--no-pauses`) the whole
hunt does not."""

from __future__ import annotations

from pathlib import Path

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.hunt import hunt_outcome
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.options import EXPLORE, CampaignOptions
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.fixtures import THOROUGH

MUTANT = "send_after_lapsed_lease"
# the post's `started` committed, the worker dies: its recoverer reconciles (the lookup's read,
# looked up, resolved), begins publish again, builds and prepares the intent, commits `started`
CRASHED = HitPoint(worker=0, step="publish", boundary="effect.started")
AFTER_STARTED = 7  # the recoverer's 8th hit, publish's `effect.started`
PAUSED = Interleave(after_worker=0, switch_at=(AFTER_STARTED,), pause_expires_lease=True)
AT_LEASE = Interleave(after_worker=0, switch_at=(0,), pause_expires_lease=True)


def _run(engine: str, pair: Interleave, root: Path) -> tuple[RunResult, History]:
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    scenario = CATALOGUE["research_publish"]
    schedule = FaultSchedule(
        scenario=scenario.name, run_id="paused", crashes=(CRASHED,), interleave=pair
    )
    config = CampaignConfig(scenarios=[scenario], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        return campaign.execute(scenario, schedule, "pair")


def _posts(history: History) -> int:
    return sum(1 for r in history.requests if r.operation == "create_post")


def test_caught_paused_after_started_escapes_paused_at_the_lease_and_the_reference_passes(
    tmp_path: Path,
) -> None:
    caught, history = _run(MUTANT, PAUSED, tmp_path / "paused")
    assert caught.valid is False
    assert next(v.checker for v in caught.verdicts if v.valid is False) == "single_effect"
    assert _posts(history) == 2  # the new owner's, then the stale one's on waking
    at_lease, history = _run(MUTANT, AT_LEASE, tmp_path / "lease")
    assert at_lease.valid is True, [v for v in at_lease.verdicts if v.valid is not True]
    assert _posts(history) == 1  # its next write after the lease is fenced: it stops there
    reference, history = _run("reference", PAUSED, tmp_path / "reference")
    assert reference.valid is True, [v for v in reference.verdicts if v.valid is not True]
    assert _posts(history) == 1
    stale = next(w for w in history.workers if w.worker == 1)
    assert "not sending" in stale.reason


def test_the_whole_hunt_without_pauses_lets_it_escape(tmp_path: Path) -> None:
    """The plan, its pairs at the lease and doubles, the exploration (a tenth of it, but under
    `thorough`): nothing but a pause after `started` shows it."""
    chosen = [CATALOGUE["email_outbox"]]
    explore = EXPLORE if THOROUGH else "6"
    escaped = hunt_outcome(
        MUTANTS[MUTANT], chosen, tmp_path / "off", CampaignOptions(pauses=False, explore=explore)
    )
    assert not escaped.result.caught
    caught = hunt_outcome(
        MUTANTS[MUTANT], chosen, tmp_path / "on", CampaignOptions(explore=explore)
    )
    assert caught.result.caught and caught.result.schedule is not None
    assert caught.result.schedule.run_id.startswith("pause-")
    assert caught.result.checker == "single_effect"
