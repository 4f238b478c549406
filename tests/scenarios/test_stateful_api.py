"""What a team's machine is made of: its scenario and engine by name or object, and the lines a
failure prints (only the schedule's non-default fields; a replay command that can work)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios import get
from killpoint.scenarios._machine_report import compact, replay_lines
from killpoint.scenarios.mutants import MUTANTS
from killpoint.scenarios.stateful import KillpointMachine, machine_for


def test_a_subclass_names_its_scenario_and_engine_as_run_campaign_does() -> None:
    class Mine(KillpointMachine):
        scenario = "email"  # type: ignore[assignment]
        engine = "mutant:only_conversation_saved"  # type: ignore[assignment]

    machine: type[KillpointMachine] = Mine  # as the base declares them, once resolved
    assert machine.scenario is get("email")
    assert machine.engine is MUTANTS["only_conversation_saved"]
    assert machine.failures == [] and machine.failures is not KillpointMachine.failures


def test_machine_for_takes_a_scenario_object_that_is_not_in_the_catalogue() -> None:
    own = replace(get("email"), name="my_notify")
    machine = machine_for(own, engine="reference")
    assert machine.scenario is own and machine.__name__ == "MyNotifyReferenceMachine"


def test_the_printed_schedule_holds_only_its_non_default_fields() -> None:
    schedule = FaultSchedule(scenario="email", run_id="r", redeliver_start=True)
    assert compact(schedule) == '{"scenario": "email", "run_id": "r", "redeliver_start": true}'


def test_the_replay_line_says_what_the_cli_would_lack() -> None:
    path = Path("s.json")
    named = FaultSchedule(scenario="email", run_id="r", engine="reference")
    assert replay_lines(path, named, get("email")) == ["replay: killpoint replay s.json"]
    unnamed = named.model_copy(update={"engine": None})
    assert "--engine MODULE:FACTORY" in replay_lines(path, unnamed, get("email"))[0]
    own = replace(get("email"), name="my_notify")
    assert "killpoint.catalogues entry point" in replay_lines(path, named, own)[0]
