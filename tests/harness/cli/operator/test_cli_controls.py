"""`killpoint control …` and `killpoint queue` on a store of both backends: what they print,
what they leave, and every user error as one line with exit status 2."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from killpoint.contract import boundaries as b
from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, InProcessServices
from killpoint.harness.cli import app
from killpoint.harness.run.killswitch import Killed
from killpoint.reference import Engine, Settings, audit_trail
from killpoint.reference.store import Store
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.email import SCENARIO as EMAIL
from killpoint.scenarios.order_saga import SCENARIO as ORDER
from tests.support.fixtures import TEST_KEY, OpenStore
from tests.support.flows import VERSIONS, kill_at

NOW = str(FakeClock().now())  # when the worker dies: its lease is live
LATER = str(FakeClock().now() + 31.0)  # past the dead worker's lease


@pytest.fixture
def runner() -> CliRunner:
    env = {"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None}
    return CliRunner(env={**env, "KILLPOINT_TENANT": None, "KILLPOINT_SERVICES_URL": None})


@pytest.fixture
def worker(
    open_store: OpenStore,
    clock: FakeClock,
    http: httpx.Client,
    tmp_path: Path,
    checkpoint_key: bytes,
) -> Engine:
    """A worker of the catalogue's order saga and e-mail workflows, as an operator's CLI knows."""
    return Engine(
        open_store(),
        [ORDER.workflow, EMAIL.workflow],
        adapters_for(http),
        artifacts=FolderArtifacts(tmp_path / "artifacts"),
        clock=clock,
        versions=VERSIONS,
        settings=Settings(),
    )


@pytest.fixture
def stuck(worker: Engine, clock: FakeClock) -> str:
    """An order whose worker died before shipping: running, its lease live until LATER."""
    worker.hook = kill_at(clock, b.STEP_BEGIN, "ship")
    worker.steps.hook = worker.hook
    with contextlib.suppress(Killed):
        worker.run(ORDER.workflow.name, "wf-1", ORDER.make_input("r1"))
    return "wf-1"


def control(runner: CliRunner, url: str, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["control", *args, "--db", url])
    return result.exit_code, result.stdout, result.stderr


def one_line(code: int, out: str, err: str) -> str:
    assert (code, out) == (2, ""), err
    assert err.startswith("killpoint: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_terminate_acts_once_and_is_audited_then_refused(
    runner: CliRunner, stuck: str, store_url: str, store: Store
) -> None:
    args = ("terminate", stuck, "--reason", "order cancelled", "--actor", "bob", "--at", LATER)
    code, out, err = control(runner, store_url, *args)
    assert code == 0, err
    assert out.startswith("terminate by bob on wf-1: now failed at state 'charge_verified'")
    [audit] = audit_trail(store, stuck)
    assert (audit.actor, audit.reason, audit.to_status) == ("bob", "order cancelled", "failed")

    err = one_line(*control(runner, store_url, *args))
    assert "terminate refused on 'wf-1': the run is failed" in err


def test_branch_prints_json(runner: CliRunner, stuck: str, store_url: str) -> None:
    args = ("branch", stuck, "--reason", "again", "--actor", "bob", "--at", LATER, "--json")
    code, out, err = control(runner, store_url, *args)
    assert code == 0, err
    assert json.loads(out)["status"] == "running"


BAD = [
    (("terminate", "wf-1", "--actor", "bob"), "Missing option '--reason'"),
    (("terminate", "wf-1", "--reason", "x"), "Missing option '--actor'"),
    (("terminate", "wf-1", "--reason", " ", "--actor", "bob", "--at", LATER), "needs a reason"),
    (("terminate", "wf-9", "--reason", "x", "--actor", "bob"), "no workflow 'wf-9'"),
    (("terminate", "wf-1", "--reason", "x", "--actor", "bob", "--at", NOW), "a live lease is"),
    (("reconcile", "wf-1", "--reason", "x", "--actor", "bob"), "give --services URL"),
    (("force-complete", "wf-1", "--reason", "x", "--actor", "bob"), "No such command"),
    (
        ("terminate", "wf-1", "--reason", "x", "--actor", "bob", "--tenant", "tenant-b"),
        "does not belong to tenant 'tenant-b'",
    ),
    (
        ("request-approval", "wf-1", "--reason", "x", "--actor", "bob", "--at", LATER),
        "has no approval gate",
    ),
]


def test_bad_input_is_one_line_and_exit_2(
    runner: CliRunner, stuck: str, store_url: str, store: Store
) -> None:
    sequence = store.workflow(stuck).sequence
    for args, says in BAD:
        err = one_line(*control(runner, store_url, *args))
        assert says in err, (args, err)
    assert store.workflow(stuck).sequence == sequence and audit_trail(store, stuck) == []


def test_the_queue_lists_the_runs_that_wait_for_a_person_oldest_first(
    runner: CliRunner,
    stuck: str,
    worker: Engine,
    clock: FakeClock,
    services: InProcessServices,
    store_url: str,
) -> None:
    services.set_plan(
        FaultPlan.of(FaultRule(service="mailer", operation="send", mode=FaultMode.LOST_RESPONSE))
    )
    worker.hook = worker.steps.hook = lambda boundary, step=None: None
    clock.advance(100.0)
    mail = worker.run(EMAIL.workflow.name, "wf-mail", EMAIL.make_input("r1"))
    assert mail.status is RunStatus.NEEDS_REVIEW
    at = str(clock.now() + 60.0)

    shown = runner.invoke(app, ["queue", "--db", store_url, "--at", at, "--json"])

    assert shown.exit_code == 0, shown.stderr
    [entry] = json.loads(shown.stdout)  # the running order is no one's to act on
    assert (entry["workflow_id"], entry["reason"]) == ("wf-mail", "needs_review")
    assert entry["age_s"] >= 60.0 and entry["oldest_unresolved_age_s"] >= 60.0
    assert entry["controls"] == ["terminate"]  # the mailer can be neither asked nor retried
    text = runner.invoke(app, ["queue", "--db", store_url, "--at", at]).stdout
    assert "needs_review" in text and "controls: terminate" in text
    for narrowed in (["--reason", "quarantined"], ["--older-than", "3600"]):
        none = runner.invoke(app, ["queue", "--db", store_url, "--at", at, "--json", *narrowed])
        assert json.loads(none.stdout) == []
    bad = runner.invoke(app, ["queue", "--db", store_url, "--reason", "bored"])
    assert "no queue reason 'bored'" in one_line(bad.exit_code, bad.stdout, bad.stderr)


def test_inspect_lists_the_controls_allowed_now_and_why_the_others_are_refused(
    runner: CliRunner, stuck: str, store_url: str
) -> None:
    shown = runner.invoke(app, ["inspect", stuck, "--db", store_url, "--at", LATER])
    assert shown.exit_code == 0, shown.stderr
    assert "  controls     compensate, branch, terminate\n" in shown.stdout
    assert "    refused reconcile: no effect is in doubt" in shown.stdout
    live = runner.invoke(app, ["inspect", stuck, "--db", store_url, "--json", "--at", NOW])
    assert json.loads(live.stdout)["controls"] == []
