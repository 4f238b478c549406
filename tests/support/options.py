"""Campaign options as the CLI, the pytest plugin and a config file give them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args, get_origin

from killpoint.harness.campaign.execute import CampaignConfig
from killpoint.harness.options import (
    Option,
)
from killpoint.harness.results import CampaignResult

# Where each option lands, in the config (and the processes) `jobs.run_campaign` is given.
IN_CONFIG: dict[str, Callable[[CampaignConfig, int], object]] = {
    "scenarios": lambda c, n: tuple(s.name for s in c.scenarios),
    "engine": lambda c, n: c.engine.ref,
    "tier": lambda c, n: c.tier,
    "db": lambda c, n: c.store_url,
    "double": lambda c, n: c.double,
    "double_limit": lambda c, n: c.double_limit,
    "interleave": lambda c, n: c.interleave,
    "network": lambda c, n: c.network,
    "named": lambda c, n: c.named,
    "deploys": lambda c, n: c.deploys,
    "seed": lambda c, n: c.seed,
    "explore": lambda c, n: c.explore,
    "operators": lambda c, n: c.operators,
    "shard": lambda c, n: c.shard,
    "worker_timeout": lambda c, n: c.worker_timeout,
    "neighbours": lambda c, n: c.neighbours,
    "canaries": lambda c, n: c.canaries,
    "jobs": lambda c, n: n,
    "lies": lambda c, n: c.lies,
    "pauses": lambda c, n: c.pauses,
    "real_pass": lambda c, n: c.real_pass,
}


def empty_result(config: CampaignConfig) -> CampaignResult:
    return CampaignResult(engine=config.engine.name, tier=config.tier, backend="none",
                          started_at="2024-01-01T00:00:00", scenarios=[], runs=[])  # fmt: skip


# Text a user might type for the options whose value is not a boolean, a number or a choice.
TEXT_SAMPLES = {
    "scenarios": "email",
    "engine": "mutant:budgets_reset_on_restart",
    "db": "sqlite:///elsewhere.sqlite",
    "shard": "2/3",
    "explore": "30s",
    "jobs": "3",
    "worker_timeout": "45",
    "report": "r.html",
    "junit": "j.xml",
    "replay": "s.json",
}


def sample(spec: Option) -> str:
    """A value other than the default, as text (a flag's, an environment variable's)."""
    if spec.hint is bool:
        return str(not spec.default).lower()
    if spec.hint is int:
        return str(spec.default + 7)
    if get_origin(spec.hint) is Literal:
        return next(str(c) for c in get_args(spec.hint) if c != spec.default)
    return TEXT_SAMPLES[spec.name]  # a new text option needs a sample here
