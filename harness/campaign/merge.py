"""Merging shard results: one campaign, as if it had run on one machine.

Shards split the planned runs (every N-th from i), never a scenario's discovery, so every shard
saw the same boundaries; a boundary counts as crashed when any shard crashed it. Parts that
cover different scenarios (two test modules, say) merge side by side.
"""

from __future__ import annotations

from killpoint.contract.errors import KillpointError
from killpoint.harness.results import CampaignResult, ScenarioCoverage


def merge_results(parts: list[CampaignResult]) -> CampaignResult:
    if not parts:
        raise KillpointError("nothing to merge")
    first = parts[0]
    for part in parts[1:]:
        if (part.engine, part.tier, part.seed) != (first.engine, first.tier, first.seed):
            raise KillpointError("shards disagree on engine, tier or seed; not one campaign")
    coverage: dict[str, ScenarioCoverage] = {}
    for part in parts:
        for cov in part.scenarios:
            seen = coverage.get(cov.scenario)
            if seen is None:
                coverage[cov.scenario] = cov
                continue
            crashed = [
                b
                for b in seen.boundaries_discovered
                if b in seen.boundaries_crashed or b in cov.boundaries_crashed
            ]
            coverage[cov.scenario] = seen.model_copy(
                update={
                    "boundaries_crashed": crashed,
                    "outcome_by_boundary": seen.outcome_by_boundary | cov.outcome_by_boundary,
                }
            )
    runs = sorted((r for part in parts for r in part.runs), key=lambda r: (r.scenario, r.run_id))
    unique = {(r.scenario, r.run_id): r for r in runs}  # every shard ran each recording
    for name, cov in coverage.items():
        mine = [r for r in unique.values() if r.scenario == name]
        coverage[name] = cov.model_copy(
            update={"runs": len(mine), "violations": sum(r.valid is False for r in mine)}
        )
    return first.model_copy(
        update={
            "shard": None,
            "scenarios": list(coverage.values()),  # every part's scenarios, in first-seen order
            "runs": list(unique.values()),
            "duration_s": max(p.duration_s for p in parts),
            "wall_s": max((p.wall_s for p in parts if p.wall_s is not None), default=None),
            "mutants": [m for part in parts for m in part.mutants],
        }
    )
