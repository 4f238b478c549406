"""The searches past a campaign's plan: one exploration per scenario, with a seed of its own,
for the scenarios a shard explores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from killpoint.harness.campaign.explore import Budget, Exploration, menu
from killpoint.harness.campaign.plan import Plan
from killpoint.harness.scenario import Scenario

if TYPE_CHECKING:
    from killpoint.harness.campaign.execute import Campaign


def exploration(
    campaign: Campaign,
    plan: Plan,
    scenarios: Sequence[Scenario],
    budget: Budget | None = None,
    part: int = 0,
    hunt: bool = False,
) -> list[Exploration]:
    """The searches past `plan`, one per scenario with a seed of its own, for the scenarios
    this shard explores (every n-th): sharded or not, each scenario's search is the same.
    `budget` (the campaign's by default) and `part` (a later pass, with seeds and run ids of
    its own) are for a hunt, which explores in two passes. A campaign's menus come from the
    recordings alone: a shard has the recoveries of its own single crashes only, and every
    shard must draw what one process draws; a hunt (one process) adds the recoveries' hits.
    A campaign's searches keep each result as they go; a hunt keeps what a search returns."""
    config = campaign.config
    index, total = config.shard or (1, 1)
    budget = (budget or Budget.parse(config.explore)).per_scenario(len(scenarios))
    return [
        Exploration(
            menu(s, plan.recordings[s.name], plan.recoveries.get(s.name, []) if hunt else []),
            campaign.judge,
            budget,
            seed=config.seed * 1000 + k + 500 * part,
            pairs=config.interleave and config.tier == "inprocess" and config.pairs_in_process,
            label=f"{k}" + "b" * part,
            keep=None if hunt else campaign.keep,
            lies=config.lies,
            neighbours=config.beside_neighbours,
        )
        for k, s in enumerate(scenarios)
        if k % total == index - 1
    ]
