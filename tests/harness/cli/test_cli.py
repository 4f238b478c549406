"""The command line: `inspect` (text and JSON), `compact`, `demo`, and one-line user errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.contract import boundaries as b
from killpoint.contract.clock import FakeClock
from killpoint.fake_services import InProcessServices
from killpoint.harness.cli import app
from killpoint.harness.run.killswitch import Killed
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import alter_rows, delete_rows, kill_at
from tests.support.seals import flip_one_byte

POST = {"slug": "stopped", "title": "Stopped"}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})


@pytest.fixture
def stopped(new_worker: NewWorker, clock: FakeClock) -> str:
    """A publish run killed after the CMS committed the post and before the receipt."""
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.RESPONSE_READ, "create_post"), owner="worker-a").run(
            "publish", "wf-1", POST
        )
    return "wf-1"


def inspect(runner: CliRunner, url: str, clock: FakeClock, *extra: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["inspect", "wf-1", "--db", url, "--at", str(clock.now()), *extra])
    return result.exit_code, result.stdout, result.stderr


def test_inspect_shows_the_unresolved_effect_and_the_reconcile_action(
    runner: CliRunner, stopped: str, store_url: str, store: Store, clock: FakeClock
) -> None:
    code, out, err = inspect(runner, store_url, clock)

    assert code == 0, err
    [key] = [e.idempotency_key for e in store.effects("wf-1")]
    assert "status       running" in out
    assert "position     state 'drafted', sequence 2" in out
    assert "integrity verified" in out
    assert f"UNRESOLVED create_post/create_post on cms: started, attempts 1, key {key}" in out
    assert f"action: reconcile — look up cms by key {key}" in out
    assert "lease        worker-a until" in out and "(live)" in out
    assert "next         create_post" in out
    assert "blocked      effect create_post/create_post is started: reconcile" in out
    assert "blocked      lease held by worker-a" in out


def test_inspect_json_parses_and_carries_the_same_facts(
    runner: CliRunner, stopped: str, store_url: str, clock: FakeClock
) -> None:
    clock.advance(31)  # the dead worker's lease has lapsed
    code, out, _ = inspect(runner, store_url, clock, "--json")

    assert code == 0
    view = json.loads(out)
    [effect] = view["effects"]
    assert (effect["status"], effect["unresolved"], effect["action"]) == (
        "started",
        True,
        "reconcile",
    )
    assert effect["receipt"] is None
    assert view["checkpoint"]["trusted"] is True
    assert view["checkpoint"]["sealed"]["next_actions"] == ["create_post"]
    assert view["lease"]["owner"] == "worker-a" and view["lease"]["live"] is False
    assert view["lease"]["fencing_token"] == 1
    assert [t["step"] for t in view["next_transitions"]] == ["create_post"]
    assert not any("lease held" in reason for reason in view["blocked"])


def test_inspect_shows_a_tampered_checkpoint_as_rejected(
    runner: CliRunner, stopped: str, store_url: str, store: Store, clock: FakeClock
) -> None:
    flip_one_byte(store, "wf-1", 2)
    code, out, _ = inspect(runner, store_url, clock)
    assert code == 0
    assert "checkpoint   #2 REJECTED: checkpoint integrity tag does not match its bytes" in out
    assert "blocked      quarantined: checkpoint #2 rejected" in out

    code, out, _ = inspect(runner, store_url, clock, "--json")
    view = json.loads(out)
    assert view["checkpoint"]["trusted"] is False
    assert view["next_transitions"] == [] and view["artifacts"] == []


def test_inspect_rejects_a_checkpoint_row_moved_to_another_tenant(
    runner: CliRunner, stopped: str, store_url: str, store: Store, clock: FakeClock
) -> None:
    """The workflow is the operator's; its latest checkpoint row claims another tenant."""
    alter_rows(store, "checkpoints", {"tenant": "acme"}, workflow_id="wf-1", sequence=2)
    code, out, _ = inspect(runner, store_url, clock)
    assert code == 0
    assert "REJECTED: checkpoint wf-1#2 belongs to tenant 'acme', not 'default'" in out
    assert "ANOMALY" not in out  # nothing sealed to compare: the rejection is the finding


def test_an_edited_schema_version_column_is_not_shown_as_verified(
    runner: CliRunner, stopped: str, store_url: str, store: Store, clock: FakeClock
) -> None:
    """The column beside the sealed body is the store's word; the body's own version is sealed."""
    alter_rows(store, "checkpoints", {"schema_version": 99}, workflow_id="wf-1", sequence=2)

    code, out, _ = inspect(runner, store_url, clock)

    assert code == 0
    assert "checkpoint   #2 state 'drafted', schema v4, sealed, integrity verified" in out
    assert "v99" not in out.split("ANOMALY")[-1].split("\n", 1)[1]  # only the flag names it
    assert "ANOMALY      checkpoints.schema_version says 99; sealed checkpoint #2 says 4" in out
    _, out, _ = inspect(runner, store_url, clock, "--json")
    view = json.loads(out)
    assert view["checkpoint"]["sealed"]["schema_version"] == 4
    assert view["checkpoint"]["row"]["schema_version"] == 99
    assert view["anomalies"] == [
        {
            "kind": "unsealed_disagrees",
            "detail": "checkpoints.schema_version says 99; sealed checkpoint #2 says 4",
            "column": "checkpoints.schema_version",
            "unsealed": 99,
            "sealed": 4,
        }
    ]


def test_the_position_is_labelled_unsealed_and_flagged_where_it_disagrees(
    runner: CliRunner, stopped: str, store_url: str, store: Store, clock: FakeClock
) -> None:
    code, out, _ = inspect(runner, store_url, clock)
    assert code == 0 and "ANOMALY" not in out
    assert "position     state 'drafted', sequence 2  (workflow row, unsealed)" in out
    assert "status       running  (workflow row, unsealed)" in out

    alter_rows(store, "workflows", {"state": "done", "status": "completed"}, workflow_id="wf-1")
    code, out, _ = inspect(runner, store_url, clock)

    assert code == 0
    assert "position     state 'done', sequence 2  (workflow row, unsealed)" in out
    assert "ANOMALY      workflows.state says 'done'; sealed checkpoint #2 says 'drafted'" in out
    assert (
        "ANOMALY      workflows.status says 'completed'; sealed checkpoint #2 says 'running'" in out
    )
    _, out, _ = inspect(runner, store_url, clock, "--json")
    assert [a["column"] for a in json.loads(out)["anomalies"]] == [
        "workflows.state",
        "workflows.status",
    ]


def test_a_completed_workflow_whose_checkpoints_were_deleted_is_flagged(
    runner: CliRunner, new_worker: NewWorker, store_url: str, store: Store, clock: FakeClock
) -> None:
    new_worker().run("pure", "wf-1", {})
    assert delete_rows(store, "checkpoints", workflow_id="wf-1") == 3

    code, out, _ = inspect(runner, store_url, clock)

    assert code == 0
    assert (
        "ANOMALY      the workflow row says completed, but no checkpoint proves it: its "
        "checkpoint rows were deleted"
    ) in out
    assert "checkpoint   none" in out
    _, out, _ = inspect(runner, store_url, clock, "--json")
    [anomaly] = json.loads(out)["anomalies"]
    assert anomaly["kind"] == "checkpoint_missing"


def test_inspect_shows_approvals_with_their_expiry(
    runner: CliRunner,
    new_worker: NewWorker,
    services: InProcessServices,
    store_url: str,
    clock: FakeClock,
) -> None:
    new_worker().run("pay", "wf-1", {"order_id": "o-1"})
    code, out, _ = inspect(runner, store_url, clock)
    assert code == 0
    assert "status       waiting_approval" in out
    assert "pay: requested by —" in out
    assert "blocked      waiting approval at gate 'pay'" in out

    new_worker().grant("wf-1", "pay", "alice", ttl_s=60)
    _, out, _ = inspect(runner, store_url, clock)
    assert "pay: granted by alice, expires" in out and "(in 60s)" in out
    clock.advance(61)
    _, out, _ = inspect(runner, store_url, clock)
    assert "pay: granted EXPIRED by alice" in out
    assert "ANOMALY" not in out
    assert "blocked      approval 'pay' expired at" in out


def test_compact_reports_what_it_dropped(
    runner: CliRunner, new_worker: NewWorker, store_url: str, store: Store, clock: FakeClock
) -> None:
    new_worker().run("pure", "wf-1", {})
    clock.advance(1)
    args = ["compact", "--keep-window", "0", "--db", store_url, "--at", str(clock.now())]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("dropped 2 checkpoint row(s) of tenant 'default' older than 0s")
    assert [c.sequence for c in store.checkpoints("wf-1")] == [3]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["inspect", "nope"], "killpoint: no workflow 'nope'"),
        (["inspect", "wf-1", "--wrong"], "killpoint: No such option: --wrong"),
        (["inspect", "wf-1", "--db", "mysql://u@h/db"], "killpoint: unsupported database"),
        (["inspect", "wf-1", "--db", "sqlite:///no/such/file.sqlite"], "killpoint: no database"),
        (["inspect", "wf-1", "--tenant", " "], "killpoint: --tenant must name a tenant"),
        (["compact", "--keep-window", "0", "--tenant", ""], "killpoint: --tenant must name"),
        (["compact"], "killpoint: Missing option '--keep-window'"),
        (["compact", "--keep-window", "soon"], "killpoint: Invalid value for '--keep-window'"),
        (["explode"], "killpoint: No such command 'explode'"),
    ],
)
def test_user_errors_print_one_line_and_exit_2(
    args: list[str], message: str, runner: CliRunner, stopped: str, store_url: str
) -> None:
    if args[:2] == ["inspect", "nope"]:
        args = [*args, "--db", store_url]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_a_postgres_that_cannot_be_reached_is_a_user_error(runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["inspect", "wf-1", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none"]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("killpoint: cannot open postgresql+psycopg://nobody@")
    assert result.stderr.count("\n") == 1


def test_without_a_key_the_cli_uses_a_random_one_and_says_so(
    stopped: str, store_url: str, clock: FakeClock
) -> None:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": None})
    code, out, err = inspect(runner, store_url, clock)
    assert code == 0
    assert "$KILLPOINT_CHECKPOINT_KEY is unset: this command checks seals with a random key" in err
    assert "written by another process show as REJECTED" in err
    assert "REJECTED" in out


def test_commands_are_registered_on_one_app() -> None:
    names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    assert {"inspect", "compact", "demo"} <= names


def test_demo_runs_crashes_once_and_resumes_without_a_duplicate(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "store     sqlite:///killpoint-out/killpoint.sqlite" in result.stdout
    assert "action: reconcile" in result.stdout
    assert "posts created: 1" in result.stdout
    assert "result    OK" in result.stdout
    assert (tmp_path / "killpoint-out" / "killpoint.sqlite").exists()


def test_python_dash_m_harness_runs_the_cli(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "killpoint", "demo", "--db", f"sqlite:///{tmp_path / 'd.sqlite'}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "KILLPOINT_CHECKPOINT_KEY": ""},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "random key for this process only" in done.stderr
    assert "result    OK" in done.stdout
