"""Tenants: a worker or an operator of tenant A cannot load, resume, inspect or act on a
workflow of tenant B, on either backend.

The operator acts for `--tenant`, else `$KILLPOINT_TENANT`, else the engine's `default` tenant:
an operator who names no tenant sees only the default tenant's workflows, never a named one's.
A refusal is one line, exit 2, and shows none of the other tenant's fields.
"""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.harness.cli import app
from killpoint.reference.errors import WrongTenantError
from killpoint.reference.operator_view import build_view
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import alter_rows

KEY = TEST_KEY.encode()
B = "tenant-b"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(
        env={
            "KILLPOINT_CHECKPOINT_KEY": TEST_KEY,
            "KILLPOINT_DATABASE_URL": None,
            "KILLPOINT_TENANT": None,
        }
    )


@pytest.fixture
def b_workflow(new_worker: NewWorker) -> str:
    """Tenant B's publish run, completed: its rows hold B's state, slug and receipt."""
    done = new_worker(tenant=B).run("publish", "wf-b", {"slug": "b-secret", "title": "B"})
    assert done.status is RunStatus.COMPLETED
    return "wf-b"


def _assert_refused(result_code: int, out: str, err: str) -> None:
    assert result_code == 2
    assert out == ""
    assert err.startswith("killpoint: workflow 'wf-b' does not belong to tenant ")
    assert err.count("\n") == 1 and "Traceback" not in err
    for field in (B, "b-secret", "publish", "done", "completed"):
        assert field not in err


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("who", [["--tenant", "tenant-a"], ["--tenant=tenant-a"], []], ids=str)
def test_inspect_refuses_another_tenant_s_workflow_in_one_line(
    runner: CliRunner, b_workflow: str, store_url: str, who: list[str], as_json: bool
) -> None:
    args = ["inspect", b_workflow, "--db", store_url, *who, *(["--json"] if as_json else [])]
    result = runner.invoke(app, args)
    _assert_refused(result.exit_code, result.stdout, result.stderr)


def test_inspect_takes_the_operator_s_tenant_from_the_environment(
    runner: CliRunner, b_workflow: str, store_url: str
) -> None:
    args = ["inspect", b_workflow, "--db", store_url, "--json"]
    refused = runner.invoke(app, args, env={"KILLPOINT_TENANT": "tenant-a"})
    _assert_refused(refused.exit_code, refused.stdout, refused.stderr)

    shown = runner.invoke(app, args, env={"KILLPOINT_TENANT": B})
    assert shown.exit_code == 0, shown.stderr
    view = json.loads(shown.stdout)
    assert view["tenant"] == B and view["checkpoint"]["trusted"] is True


def test_the_operator_view_refuses_another_tenant_s_workflow(
    b_workflow: str, store: Store, clock: FakeClock
) -> None:
    with pytest.raises(WrongTenantError, match="does not belong to tenant 'tenant-a'"):
        build_view(store, b_workflow, key=KEY, now=clock.now(), tenant="tenant-a")
    assert build_view(store, b_workflow, key=KEY, now=clock.now(), tenant=B).tenant == B


def test_compact_drops_only_the_operator_s_tenant_s_checkpoints(
    runner: CliRunner,
    new_worker: NewWorker,
    b_workflow: str,
    store_url: str,
    store: Store,
    clock: FakeClock,
) -> None:
    new_worker(tenant="tenant-a").run("pure", "wf-a", {})
    clock.advance(1)
    b_before = [c.sequence for c in store.checkpoints(b_workflow)]
    args = ["compact", "--keep-window", "0", "--db", store_url, "--at", str(clock.now())]

    result = runner.invoke(app, [*args, "--tenant", "tenant-a"])

    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("dropped 2 checkpoint row(s) of tenant 'tenant-a' older")
    assert [c.sequence for c in store.checkpoints("wf-a")] == [3]
    assert [c.sequence for c in store.checkpoints(b_workflow)] == b_before
    assert store.compacted_below(b_workflow) == 0

    default = runner.invoke(app, args)  # no tenant: the default tenant's, of which there are none
    assert default.exit_code == 0, default.stderr
    assert default.stdout.startswith("dropped 0 checkpoint row(s) of tenant 'default'")
    assert [c.sequence for c in store.checkpoints(b_workflow)] == b_before


def test_the_store_compacts_one_tenant_at_a_time(
    new_worker: NewWorker, b_workflow: str, store: Store, clock: FakeClock
) -> None:
    new_worker().run("pure", "wf-default", {})
    clock.advance(1)
    assert store.compact(clock.now(), keep_window_s=0, tenant="default") == 2
    assert len(store.checkpoints(b_workflow)) == 4
    assert store.compact(clock.now(), keep_window_s=0, tenant=B) == 3
    assert [c.sequence for c in store.checkpoints(b_workflow)] == [4]


def test_a_worker_of_another_tenant_cannot_resume_a_workflow_and_touches_nothing(
    new_worker: NewWorker, store: Store, clock: FakeClock
) -> None:
    new_worker(tenant=B).start("publish", "wf-b", {"slug": "b-secret", "title": "B"})
    before = (store.workflow("wf-b"), store.checkpoints("wf-b"))
    intruder = new_worker(tenant="tenant-a")

    with pytest.raises(WrongTenantError) as refused:
        intruder.resume("wf-b")
    with pytest.raises(WrongTenantError):
        intruder.run("publish", "wf-b", {"slug": "mine", "title": "A"})  # a redelivered start

    assert str(refused.value) == "workflow 'wf-b' does not belong to tenant 'tenant-a'"
    assert (store.workflow("wf-b"), store.checkpoints("wf-b")) == before
    assert new_worker(tenant=B).resume("wf-b").status is RunStatus.COMPLETED


def test_a_worker_of_another_tenant_does_not_quarantine_its_broken_workflow(
    new_worker: NewWorker, store: Store
) -> None:
    """Even a row that fails its checks is the other tenant's to flag, not ours."""
    new_worker(tenant=B).start("pure", "wf-b", {})
    # a body stored as text: SQLite cannot even read the row, PostgreSQL's fails its seal
    alter_rows(store, "checkpoints", {"body": sa.literal_column("'not bytes'")}, workflow_id="wf-b")

    with pytest.raises(WrongTenantError):
        new_worker(tenant="tenant-a").resume("wf-b")

    assert store.workflow("wf-b").status is RunStatus.RUNNING
    assert new_worker(tenant=B).resume("wf-b").status is RunStatus.QUARANTINED


def test_a_worker_of_another_tenant_cannot_grant_its_approval(
    new_worker: NewWorker, store: Store
) -> None:
    assert new_worker(tenant=B).run("pay", "wf-b", {"order_id": "o-1"}).status is (
        RunStatus.WAITING_APPROVAL
    )
    with pytest.raises(WrongTenantError):
        new_worker(tenant="tenant-a").grant("wf-b", "pay", "mallory", ttl_s=60)
    [approval] = store.approvals("wf-b")
    assert (approval.status, approval.actor) == ("requested", None)
