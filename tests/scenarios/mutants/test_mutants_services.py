"""Each realism rule of the fake services alone exposes a mutant: on a hand-written schedule the
mutant's run is judged false with only that rule on, and true with every rule on but that one.
The reference passes the same schedule with every rule on."""

from __future__ import annotations

from dataclasses import fields, replace
from itertools import count
from pathlib import Path

import pytest

from killpoint.fake_services import FaultPlan, FaultRule, realism
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS

RULES = [f.name for f in fields(realism.Realism) if f.type in ("bool", bool)]


def _lagging_run_id() -> str:
    """A run whose shipment (its first publication) lags: the run id seeds the draws."""
    runs = (f"alone-lag-{n}" for n in count())
    return next(run_id for run_id in runs if realism.visibility_lag_s(realism.ACTIVE, run_id, 1))


def _unindexed_run_id() -> str:
    """A run whose message (its first) shows in the provider's search only after a lag."""
    runs = (f"alone-search-{n}" for n in count())
    return next(run_id for run_id in runs if realism.search_lag_s(realism.ACTIVE, run_id, 1))


# rule -> (its mutant, the scenario, the schedule's run id and faults)
ALONE: dict[str, tuple[str, str, str, dict[str, object]]] = {
    # no fault at all: the shipment's first read comes before its lag is over
    "visibility_lag": ("republished_when_not_yet_visible", "order_saga", _lagging_run_id(), {}),
    # killed before the charge was sent: the resumed worker searches charges by order id
    "other_customers": (
        "charge_found_by_order_id",
        "order_saga",
        "alone-neighbours",
        {"crashes": (HitPoint(worker=0, step="charge", boundary="effect.started"),)},
    ),
    # the send's response lost: the same worker searches for the message at once
    "search_lag": (
        "resent_when_not_yet_searchable",
        "email_outbox",
        _unindexed_run_id(),
        {
            "network": FaultPlan.of(
                FaultRule(service="outbound", operation="send", occurrence=1, mode="lost_response")
            )
        },
    ),
}


def _run(engine: str, rule: str, root: Path, rules: realism.Realism) -> RunResult:
    _, scenario_name, run_id, faults = ALONE[rule]
    scenario = CATALOGUE[scenario_name]
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    schedule = FaultSchedule.model_validate({"scenario": scenario_name, "run_id": run_id, **faults})
    config = CampaignConfig(scenarios=[scenario], workdir=root, engine=spec)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(realism, "ACTIVE", rules)
        with Campaign(config) as campaign:
            result, _ = campaign.execute(scenario, schedule, "single")
    return result


def _only(rule: str, on: bool) -> realism.Realism:
    """Every rule off but `rule` (on=True), or every rule on but `rule` (on=False)."""
    rules = realism.ACTIVE
    for name in RULES:
        rules = replace(rules, **{name: (name == rule) == on})  # type: ignore[arg-type]
    return rules


def test_each_rule_has_a_registered_mutant() -> None:
    assert set(ALONE) == set(RULES)
    assert {mutant for mutant, *_ in ALONE.values()} <= set(MUTANTS)


@pytest.mark.parametrize("rule", sorted(ALONE))
def test_the_mutant_is_exposed_by_this_rule_alone(rule: str, tmp_path: Path) -> None:
    mutant = ALONE[rule][0]
    caught = _run(mutant, rule, tmp_path / "only", _only(rule, on=True))
    assert caught.valid is False, caught.verdicts
    escaped = _run(mutant, rule, tmp_path / "without", _only(rule, on=False))
    assert escaped.valid is True, [v for v in escaped.verdicts if v.valid is not True]


@pytest.mark.parametrize("rule", sorted(ALONE))
def test_the_reference_passes_the_schedule_under_every_rule(rule: str, tmp_path: Path) -> None:
    result = _run("reference", rule, tmp_path, realism.ACTIVE)
    assert result.valid is True, [v for v in result.verdicts if v.valid is not True]
