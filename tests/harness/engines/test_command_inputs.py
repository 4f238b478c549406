"""What a command engine hands the harness, checked before it is believed: engine files, history
lines and `--engine` references, each wrong one a clear error naming what is wrong."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.contract.errors import KillpointError
from killpoint.harness.catalogue import installed
from killpoint.harness.cli import app
from killpoint.harness.engines.command import Command
from killpoint.harness.engines.command_history import parse_history
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.protocol import CLOCK, Recorded
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule
from tests.support.fixtures import TEST_KEY

TINY = Path(__file__).parents[2] / "support" / "command_engines" / "tiny.py"
CHECKPOINT = '{"record": "checkpoint", "sequence": 1, "state": "a", "status": "running", '
CHECKPOINT += '"created_at": 1.0}'


def test_history_lines_become_the_oracles_records() -> None:
    effect = (
        '{"record": "effect", "operation_id": "o", "step": "charge", "service": "payments", '
        '"intent": "charge", "idempotency_key": "k", "status": "committed"}'
    )
    approval = '{"record": "approval", "gate": "g", "status": "granted", "expires_at": 9.0}'
    text = "\n".join([CHECKPOINT, "", effect, approval, '{"record": "compacted", "below": 2}'])
    history = parse_history(text, "h", "wf-1")
    assert [c.state for c in history.checkpoints] == ["a"]
    assert [e.workflow_id for e in history.effects] == ["wf-1"]
    assert history.approvals[0].expires_at == 9.0
    assert history.compacted_below == 2


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("not json", "line 2: not JSON"),
        ("[1]", "line 2: not a JSON object"),
        ('{"record": "mystery"}', 'line 2: "record" must be one of checkpoint'),
        ('{"record": "checkpoint", "state": "a"}', "line 2: sequence: Field required"),
        ('{"record": "compacted", "below": "3"}', "line 2: a compacted record is"),
    ],
)
def test_a_malformed_history_line_is_one_error_naming_the_line(line: str, said: str) -> None:
    with pytest.raises(KillpointError, match="the history") as error:
        parse_history(f"{CHECKPOINT}\n{line}", "the history command of x", "wf")
    assert said in str(error.value)


def test_a_history_command_feeds_the_run_and_a_bad_line_stops_the_read(tmp_path: Path) -> None:
    os.environ["TINY_MODE"] = "send"
    try:
        command = Command(
            name="tiny",
            start=(sys.executable, str(TINY)),
            history=(sys.executable, str(TINY)),
        )
        spec = command.spec("tiny")
        schedule = FaultSchedule(scenario="email", run_id="r1")
        with World.open(tmp_path / "w") as world:
            history = run_schedule(world, installed().scenario("email"), schedule, spec)
            assert [c.sequence for c in history.checkpoints] == [1]
            assert history.ledger and "ledger" not in spec.lacks
            os.environ["TINY_HISTORY_TAIL"] = "{oops"
            with pytest.raises(KillpointError, match="line 2: not JSON"):
                Recorded(
                    spec.history_reader(world.store, installed().scenario("email")),
                    history.workflow_id,
                )
    finally:
        os.environ.pop("TINY_MODE", None)
        os.environ.pop("TINY_HISTORY_TAIL", None)


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "engine.toml"
    path.write_text(text)
    return str(path)


def test_an_engine_file_names_its_commands_scenarios_clock_and_lacks(tmp_path: Path) -> None:
    ref = write(
        tmp_path,
        'name = "orders"\nstart = "node agent.mjs"\nhistory = "node agent.mjs history"\n'
        'scenarios = ["order_saga"]\nclock = "harness"\nlacks = ["budget"]\n',
    )
    spec = load_engine(ref)
    assert (spec.name, spec.ref, spec.scenarios) == ("orders", ref, ("order_saga",))
    assert spec.reader is not None and spec.lacks == {"budget", "queue"}
    assert CLOCK in load_engine(write(tmp_path, 'name = "o"\nstart = "x"\n')).lacks


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('name = "o"\n', "start: Field required"),
        ('name = "o"\nstart = "x"\nstrat = "y"\n', "strat: Extra inputs are not permitted"),
        ('name = "o"\nstart = "x"\nclock = "sundial"\n', "clock: Input should be"),
        ('name = "o"\nstart = "\'unclosed"\n', "cannot split the command line"),
        ('name = "o"\nstart = ""\n', "start is empty"),
        ("name = \n", "not a TOML file"),
    ],
)
def test_a_wrong_engine_file_is_one_error_naming_what_is_wrong(
    tmp_path: Path, text: str, said: str
) -> None:
    with pytest.raises(KillpointError, match=said):
        load_engine(write(tmp_path, text))


def test_a_wrong_engine_reference_is_one_line_and_exit_2_before_any_work(tmp_path: Path) -> None:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY})
    for ref, said in [
        (str(tmp_path / "missing.toml"), "cannot read the engine file"),
        ("cmd:", "wants a command line"),
        ("cmd:'unclosed", "cannot split the command line"),
    ]:
        result = runner.invoke(app, ["run", "--engine", ref, "--workdir", str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert said in result.stderr and "Traceback" not in result.output
    assert not list(tmp_path.glob("campaign-*"))


def test_a_command_engines_violation_is_printed_with_a_replay_that_alone_reproduces_it(
    tmp_path: Path,
) -> None:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY})
    engine = f"cmd:{sys.executable} {TINY}"
    only_singles = "--no-double --no-network --no-named --no-interleave --no-operators"
    only_singles += " --no-deploys --no-lies --no-neighbours --no-pauses --no-real-pass"
    args = ["run", "--engine", engine, "-s", "email", *only_singles.split(), "--explore", "0"]
    result = runner.invoke(app, [*args, "--workdir", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "[single_effect]" in result.stdout
    assert "reads the wall clock, not the world clock" in result.stdout
    replay = next(x for x in result.stdout.splitlines() if x.strip().startswith("replay:"))
    schedule = replay.split("killpoint replay ", 1)[1].strip().strip("'")
    again = runner.invoke(app, ["replay", schedule])
    assert again.exit_code == 1 and "single_effect" in again.stdout, again.output


def test_a_hunt_of_a_command_engine_keeps_its_files_in_one_folder_named_after_it() -> None:
    from killpoint.harness.cli._hunts import folder_name

    name = folder_name("cmd:.venv/bin/python tests/harness/command engines/tiny.py")
    assert "/" not in name and " " not in name and name.startswith("cmd_.venv_bin_python")
    assert folder_name("json_file_engine:factory") == "json_file_engine_factory"
    assert folder_name("::") == "engine"
