"""The real-tier pass: a few deaths by `SIGKILL` at a scenario's riskiest boundaries.

An in-process death is an exception: the dying worker's `finally` blocks run and its process's
memory outlives it, so an engine that frees its lease on the way out, or trusts a table of what
it sent, is right under every in-process death and wrong under the first real one. The real tier
(`harness.run.realtier`) kills a forked worker with `SIGKILL`, but costs a few times an in-process
run, so a campaign in the in-process tier adds only this pass: from a scenario's fault-free
recording, one single crash per boundary kind at which a mutating request had reached a service,
for each kind of request (`Risk.DELIVERED`: the lost-response window, where what the dead
process knew matters most, and what it takes to recover differs by service: one dedups a
request sent again, another does it twice), and one at each step's checkpoint commit (where a
worker's cleanup would run next). Their number is bounded by the boundary kinds, the kinds of
request and the steps, never the hits: forty messages sent make one run per boundary, not forty.

A named case that requires the real tier says so by its schedule (`tier="real"`): the campaign
keeps that tier whatever its own (`Campaign.judge`), in the named cases' phase.

Pure selection, like `plan`: histories in, planned runs out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from killpoint.contract import boundaries as b
from killpoint.harness.campaign.plan import PlannedRun, Risk, crash_risk, first_hits, point
from killpoint.harness.checkers.ground_truth import MUTATIONS
from killpoint.harness.history import History
from killpoint.harness.protocol import FORKED, EngineSpec
from killpoint.harness.results import RunKind
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule

__all__ = ["FORKED", "real_pass", "skipped"]

KIND: RunKind = "real"


def real_pass(scenario: Scenario, recording: History) -> list[PlannedRun]:
    """The pass's runs for `scenario`, in the order of the recording's hits: a single crash in
    the real tier at the first hit of each boundary kind where a mutating request of each
    (service, operation) had reached its service, and at the first checkpoint commit of each
    step (`real-<n>`, n the hit's place)."""
    risks = crash_risk(recording)
    seen: set[tuple[str, str | None, str]] = set()
    runs: list[PlannedRun] = []
    for n, (hit, sent) in enumerate(zip(first_hits(recording), _delivered(recording), strict=True)):
        keys: set[tuple[str, str | None, str]] = set()
        if risks[n] is Risk.DELIVERED:
            keys |= {(hit.boundary, service, op) for service, op in sent}
        if hit.boundary == b.CHECKPOINT_COMMITTED:
            keys.add((hit.boundary, hit.step, ""))
        if keys <= seen:
            continue
        seen |= keys
        schedule = FaultSchedule(
            scenario=scenario.name, run_id=f"real-{n}", crashes=(point(hit),), tier="real"
        )
        runs.append(PlannedRun(scenario, KIND, schedule, hit=hit, risk=risks[n]))
    return runs


def _delivered(recording: History) -> list[set[tuple[str, str]]]:
    """For each hit of the first worker, the mutating requests that reached a service since the
    hit before it (as `crash_risk` counts them), by (service, operation)."""
    mutations = [r for r in recording.requests if (r.service, r.operation) in MUTATIONS]
    found: list[set[tuple[str, str]]] = []
    since = -math.inf
    for hit in first_hits(recording):
        found.append(
            {(r.service, r.operation) for r in mutations if since < r.seq <= hit.journal_seq}
        )
        since = hit.journal_seq
    return found


def skipped(engine: EngineSpec, tier: str, asked: bool) -> str | None:
    """Why a campaign of `engine` in `tier` makes no real-tier pass, or None when it makes one:
    not asked (`--no-real-pass`), a campaign already in the real tier (every death is real), an
    engine whose workers cannot be forked (`FORKED` among what it lacks), or one whose workers
    are processes of their own (a command: every death is real)."""
    if not asked:
        return "not asked (--no-real-pass)"
    if tier == "real":
        return "the campaign is in the real tier: every death is a SIGKILL already"
    if FORKED in engine.lacks:
        return f"{engine.name} lacks {FORKED}: its workers cannot run in the real tier"
    if engine.own_process:
        return f"{engine.name} runs as a command: every death is a SIGKILL already"
    return None


def pass_size(scenarios: Sequence[Scenario], recordings: dict[str, History]) -> int:
    """How many runs the pass makes over `scenarios` (whose recordings are in)."""
    return sum(len(real_pass(s, recordings[s.name])) for s in scenarios)
