"""The store: fenced compare-and-swap, leases, the ledger rows, approvals, URL resolution."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from killpoint.contract.clock import FakeClock
from killpoint.contract.errors import KillpointError
from killpoint.contract.records import EffectRecord, EffectStatus, Receipt
from killpoint.reference.checkpoint import (
    Checkpoint,
    NewCheckpoint,
    open_checkpoint,
    seal_checkpoint,
)
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import (
    ConflictError,
    LeaseHeldError,
    StaleFenceError,
    UnknownWorkflowError,
)
from killpoint.reference.lease import Fence, Lease, Tx
from killpoint.reference.store import Store, resolve_url
from tests.support.fixtures import TEST_KEY

KEY = TEST_KEY.encode()


def _started(engine: Engine, workflow_id: str = "wf-1") -> Checkpoint:
    assert engine.start("pure", workflow_id, {"n": 1})
    stored = engine.store.latest_checkpoint(workflow_id)
    assert stored is not None
    return open_checkpoint(stored, KEY, "default")


def _next(cp: Checkpoint, state: str, clock: FakeClock) -> NewCheckpoint:
    return seal_checkpoint(
        cp.model_copy(
            update={"sequence": cp.sequence + 1, "state": state, "created_at": clock.now()}
        ),
        KEY,
    )


def test_start_is_idempotent_under_redelivery(engine: Engine) -> None:
    assert engine.start("pure", "wf-1", {"n": 1})
    assert not engine.start("pure", "wf-1", {"n": 1})
    assert [c.sequence for c in engine.store.checkpoints("wf-1")] == [1]


def test_cas_loser_gets_conflict_and_writes_nothing(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    cp = _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    winner, loser = _next(cp, "planned", clock), _next(cp, "done", clock)
    store.commit_checkpoint(lease, clock.now(), winner)
    before = store.checkpoints("wf-1")

    with pytest.raises(ConflictError, match="compare-and-swap lost: expected sequence 1"):
        store.commit_checkpoint(lease, clock.now(), loser)

    assert store.checkpoints("wf-1") == before
    assert store.latest_checkpoint("wf-1").body == winner.body  # type: ignore[union-attr]
    assert store.workflow("wf-1").state == "planned"


def test_reacquiring_a_lease_gives_a_strictly_larger_token(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    _started(engine)
    tokens = [store.acquire_lease("wf-1", "worker-a", 30, clock.now()).token for _ in range(3)]
    assert tokens == sorted(set(tokens)) and tokens[0] >= 1


def test_unexpired_lease_of_another_worker_is_held(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    _started(engine)
    store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    clock.advance(29)
    with pytest.raises(LeaseHeldError, match="leased to worker-a"):
        store.acquire_lease("wf-1", "worker-b", 30, clock.now())


def test_expired_lease_is_taken_over_and_the_old_token_is_rejected(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    cp = _started(engine)
    old = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    clock.advance(31)
    new = store.acquire_lease("wf-1", "worker-b", 30, clock.now())
    assert new.token > old.token

    with pytest.raises(StaleFenceError, match=f"fencing token {old.token} of worker-a is stale"):
        store.commit_checkpoint(old, clock.now(), _next(cp, "planned", clock))
    with pytest.raises(StaleFenceError):
        store.prepare_effect(old, clock.now(), _effect("wf-1", clock))
    assert [c.sequence for c in store.checkpoints("wf-1")] == [1]
    assert store.effects("wf-1") == []

    store.commit_checkpoint(new, clock.now(), _next(cp, "planned", clock))
    assert store.latest_checkpoint("wf-1").fencing_token == new.token  # type: ignore[union-attr]


def test_an_older_token_of_the_same_owner_is_rejected_by_the_token_alone(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    """A restarted process keeps its owner name: only the fencing token tells its old self's
    late write from its new self's, so the guard must check the token, not the owner."""
    cp = _started(engine)
    old = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    new = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    assert (new.owner, new.token) == (old.owner, old.token + 1)

    with pytest.raises(StaleFenceError, match=f"fencing token {old.token} of worker-a is stale"):
        store.commit_checkpoint(old, clock.now(), _next(cp, "planned", clock))
    with pytest.raises(StaleFenceError):
        store.prepare_effect(old, clock.now(), _effect("wf-1", clock))
    assert [c.sequence for c in store.checkpoints("wf-1")] == [1]
    assert store.effects("wf-1") == []


def test_write_under_an_expired_lease_is_rejected_even_without_a_successor(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    cp = _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    clock.advance(30)
    with pytest.raises(StaleFenceError, match="expired"):
        store.commit_checkpoint(lease, clock.now(), _next(cp, "planned", clock))
    assert store.workflow("wf-1").sequence == 1


def test_released_lease_can_be_taken_by_another_worker(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    store.release_lease(lease, clock.now())
    assert store.workflow("wf-1").lease_owner is None
    assert store.acquire_lease("wf-1", "worker-b", 30, clock.now()).token == lease.token + 1


def _effect(workflow_id: str, clock: FakeClock, op: str = "s/op") -> EffectRecord:
    return EffectRecord(
        workflow_id=workflow_id,
        operation_id=op,
        step="s",
        service="payments",
        intent="op",
        args={"a": 1},
        idempotency_key=f"kp-{workflow_id}-{op}",
        fingerprint="f" * 64,
        status=EffectStatus.PREPARED,
        attempts=0,
        updated_at=clock.now(),
    )


def test_ledger_moves_only_from_expected_statuses_and_spends_attempts(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    attempts = store.workflow("wf-1").attempts_left
    first = store.prepare_effect(lease, clock.now(), _effect("wf-1", clock))
    again = store.prepare_effect(
        lease, clock.now(), _effect("wf-1", clock).model_copy(update={"args": {"a": 2}})
    )
    assert again == first  # the intent committed first wins: a retry cannot change it

    started = store.mark_effect(
        lease,
        clock.now(),
        "s/op",
        EffectStatus.STARTED,
        expect=[EffectStatus.PREPARED],
        attempt=True,
    )
    assert started.attempts == 1
    assert store.workflow("wf-1").attempts_left == attempts - 1
    with pytest.raises(ConflictError, match="is started, not one of"):
        store.mark_effect(
            lease, clock.now(), "s/op", EffectStatus.STARTED, expect=[EffectStatus.PREPARED]
        )
    done = store.mark_effect(
        lease,
        clock.now(),
        "s/op",
        EffectStatus.COMMITTED,
        expect=[EffectStatus.STARTED],
        receipt=Receipt(resource_id="ch_1"),
    )
    assert done.receipt == Receipt(resource_id="ch_1")
    assert [(r.status, r.attempt) for r in store.effect_log("wf-1")] == [
        (EffectStatus.PREPARED, False),
        (EffectStatus.STARTED, True),
        (EffectStatus.COMMITTED, False),
    ]


def test_idempotency_keys_are_unique_across_the_ledger(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    store.prepare_effect(lease, clock.now(), _effect("wf-1", clock, "s/op"))
    clash = _effect("wf-1", clock, "s/other").model_copy(update={"idempotency_key": "kp-wf-1-s/op"})
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
        store.prepare_effect(lease, clock.now(), clash)
    assert [e.operation_id for e in store.effects("wf-1")] == ["s/op"]


def test_approval_can_be_granted_only_when_requested(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    _started(engine)
    with pytest.raises(KillpointError, match="no pending approval request"):
        store.grant_approval("wf-1", "pay", "alice", clock.now() + 60)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    store.request_approval(lease, clock.now(), "pay", "pay:pay", "policy@1", {"x": 1})
    granted = store.grant_approval("wf-1", "pay", "alice", clock.now() + 60)
    assert (granted.status, granted.actor, granted.payload) == ("granted", "alice", {"x": 1})


def test_artifact_rows_record_hash_uri_and_media_type(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    store.record_artifact(lease, clock.now(), "render", "a" * 64, "artifact:x", "text/plain", 3)
    store.record_artifact(lease, clock.now(), "render", "b" * 64, "artifact:y", "text/plain", 4)
    assert store.artifact("wf-1", "render") == ("b" * 64, "artifact:y", "text/plain")
    assert store.artifact("wf-1", "other") is None


def test_unknown_workflow_is_a_clear_error(store: Store) -> None:
    with pytest.raises(UnknownWorkflowError, match="no workflow 'nope'"):
        store.workflow("nope")
    assert store.latest_checkpoint("nope") is None


def test_url_resolution_prefers_explicit_then_environment_then_sqlite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KILLPOINT_DATABASE_URL", raising=False)
    assert resolve_url(None) == "sqlite:///killpoint-out/killpoint.sqlite"
    monkeypatch.setenv("KILLPOINT_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    assert resolve_url(None) == "postgresql+psycopg://postgres@127.0.0.1:5432/test"
    assert resolve_url("sqlite:///x.sqlite") == "sqlite:///x.sqlite"


@pytest.mark.parametrize("url", ["not a url", "mysql://u@h/db"])
def test_unsupported_database_urls_are_user_errors(url: str) -> None:
    with pytest.raises(KillpointError):
        resolve_url(url)


def test_a_store_used_as_a_context_manager_closes_its_connections(tmp_path: Path) -> None:
    """SQLite folds its write-ahead log back into the file when the last connection closes."""
    path = tmp_path / "closed.sqlite"
    with Store(f"sqlite:///{path}") as store:
        assert store.workflow_ids() == []
        assert path.with_name("closed.sqlite-wal").exists()
    assert not path.with_name("closed.sqlite-wal").exists()


class Refusing(Fence):
    """A fence that lets no write of a worker through."""

    def guard(self, tx: Tx, lease: Lease, now: float, *args: Any, **kwargs: Any) -> None:
        raise ConflictError("refused by this fence")


def test_a_view_with_another_fence_guards_its_own_writes_on_the_same_database(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    view = store.using(fence=Refusing())

    with pytest.raises(ConflictError, match="refused by this fence"):
        view.prepare_effect(lease, clock.now(), _effect("wf-1", clock))
    assert view.effects("wf-1") == []
    store.prepare_effect(lease, clock.now(), _effect("wf-1", clock))  # its own fence is kept

    assert [e.operation_id for e in view.effects("wf-1")] == ["s/op"]
    assert view.fence is not store.fence and view.log is store.log


def test_a_fenced_move_spends_no_attempt_unless_asked(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    """Only an effect's start spends an attempt: a move of the workflow row that does not say
    so (a lease's renewal, a mutant's takeover) leaves the attempts the budget holds."""
    _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    left = store.workflow("wf-1").attempts_left
    with store.db.transaction() as tx:
        assert store.fence.move(tx, lease, clock.now(), {}) == 1
    assert store.workflow("wf-1").attempts_left == left


def test_a_renewed_lease_holds_for_its_ttl_from_the_renewal_and_no_longer(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    """A renewal moves the expiry to now + ttl, in the row and in the lease handed back: another
    worker is held off until then, and takes over just after."""
    _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    clock.advance(20)
    renewed = store.renew_lease(lease, clock.now(), 30)
    assert renewed.expires_at == clock.now() + 30
    assert (renewed.owner, renewed.token) == (lease.owner, lease.token)
    clock.advance(29)  # 49 s after the first acquisition: past its ttl, not the renewal's
    with pytest.raises(LeaseHeldError, match="leased to worker-a"):
        store.acquire_lease("wf-1", "worker-b", 30, clock.now())
    clock.advance(2)
    assert store.acquire_lease("wf-1", "worker-b", 30, clock.now()).token > lease.token


def test_a_lease_cannot_be_changed_in_place(engine: Engine, store: Store, clock: FakeClock) -> None:
    """A worker holds the token it was granted: a lease is a value, never edited to a new token."""
    _started(engine)
    lease = store.acquire_lease("wf-1", "worker-a", 30, clock.now())
    with pytest.raises(AttributeError):
        lease.token = lease.token + 1  # type: ignore[misc]
