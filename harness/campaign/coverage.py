"""What a campaign covered, scenario by scenario: the boundaries its recording discovered, those
its single crashes crashed, how each ended, and how many runs (and violations) it made."""

from __future__ import annotations

from collections.abc import Sequence

from killpoint.harness.campaign.plan import PlannedRun, first_hits
from killpoint.harness.history import History
from killpoint.harness.results import RunResult, ScenarioCoverage


def with_generated(coverage: ScenarioCoverage, runs: Sequence[RunResult]) -> ScenarioCoverage:
    """A scenario's coverage counting its generated runs too, as a merge of shards counts."""
    mine = [r for r in runs if r.scenario == coverage.scenario and r.kind == "generated"]
    return coverage.model_copy(
        update={
            "runs": coverage.runs + len(mine),
            "violations": coverage.violations + sum(r.valid is False for r in mine),
        }
    )


def covered(recording: History, done: list[tuple[PlannedRun, RunResult]]) -> ScenarioCoverage:
    """What one scenario's runs covered: the boundaries its recording discovered, those its
    single crashes crashed (in hit order), and how each single crash (and the recording) ended."""
    outcomes: dict[str, str] = {}
    for p, r in done:  # a boundary crashed in both tiers shows its violation, if either had one
        if p.hit is not None and outcomes.get(p.hit.label()) != "violation":
            outcomes[p.hit.label()] = _outcome(r)
    recorded = next(r for p, r in done if p.kind == "clean")
    labels = [h.label() for h in first_hits(recording)]
    return ScenarioCoverage(
        scenario=recorded.scenario,
        boundaries_discovered=labels,
        boundaries_crashed=[label for label in labels if label in outcomes],
        runs=len(done),
        violations=sum(1 for _, r in done if r.valid is False),
        outcome_by_boundary=outcomes | {"(clean)": _outcome(recorded)},
    )


def _outcome(result: RunResult) -> str:
    if result.valid is False:
        return "violation"
    return "ok" if result.final_status in ("completed", "compensated") else result.final_status
