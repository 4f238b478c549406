from __future__ import annotations

from pathlib import Path

from killpoint.fake_services import Journal, fingerprint


def _record(journal: Journal, key: str | None, business_key: str, t: float) -> int:
    record = journal.record_request(
        "payments",
        "create_charge",
        idempotency_key=key,
        business_key=business_key,
        fingerprint=fingerprint({"k": key}),
        time=t,
    )
    with journal.db.transaction():
        journal.apply_effect(record, f"res-{record.seq}")
        journal.set_outcome(record.seq, "applied")
    return record.seq


def test_request_and_effect_are_recorded_with_outcome() -> None:
    journal = Journal.memory()
    seq = _record(journal, "k1", "order-1", 1.0)
    [request] = journal.requests()
    [effect] = journal.applied_effects()
    assert (request.seq, request.outcome, request.time) == (seq, "applied", 1.0)
    assert (effect.business_key, effect.resource_id, effect.idempotency_key) == (
        "order-1",
        f"res-{seq}",
        "k1",
    )


def test_effects_filter_by_service_and_business_key() -> None:
    journal = Journal.memory()
    _record(journal, "a", "order-1", 0)
    _record(journal, "b", "order-1", 0)
    _record(journal, "c", "order-2", 0)
    assert len(journal.applied_effects(business_key="order-1")) == 2
    assert len(journal.applied_effects(service="cms")) == 0
    assert journal.effects_by_business_key("payments") == {"order-1": 2, "order-2": 1}


def test_attempts_count_deliveries_per_idempotency_key() -> None:
    journal = Journal.memory()
    for _ in range(3):
        _record(journal, "same", "order-1", 0)
    assert journal.attempts("same") == 3
    assert journal.attempts("never") == 0


def test_requests_after_compares_the_injected_clock_strictly() -> None:
    journal = Journal.memory()
    for t in (1.0, 2.0, 3.0):
        _record(journal, None, "o", t)
    assert [r.time for r in journal.requests_after(2.0)] == [3.0]


def test_effect_rolled_back_with_its_transaction_leaves_only_the_request() -> None:
    journal = Journal.memory()
    record = journal.record_request(
        "cms", "create_post", idempotency_key=None, business_key="s", fingerprint="f", time=0
    )
    try:
        with journal.db.transaction():
            journal.apply_effect(record, "post_1")
            raise RuntimeError("crash before commit")
    except RuntimeError:
        pass
    assert len(journal.requests()) == 1
    assert journal.applied_effects() == []


def test_a_second_connection_reads_a_file_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with Journal.open(path) as writer:
        _record(writer, "k", "order-1", 5.0)
        with Journal.open(path) as reader:
            assert reader.attempts("k") == 1
            assert [e.business_key for e in reader.applied_effects()] == ["order-1"]


def test_fingerprint_ignores_key_order_but_not_values() -> None:
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert fingerprint(b"raw") != fingerprint("raw")


def _request(journal: Journal) -> int:
    record = journal.record_request(
        "cms", "create_post", idempotency_key=None, business_key="s", fingerprint="f", time=0
    )
    return record.seq


def test_the_last_seq_follows_requests_rollbacks_and_resets() -> None:
    journal = Journal.memory()
    assert journal.last_seq() == 0
    first = _request(journal)
    assert journal.last_seq() == first
    try:
        with journal.db.transaction():
            _request(journal)
            raise RuntimeError("the request row goes with its transaction")
    except RuntimeError:
        pass
    assert journal.last_seq() == first
    journal.db.clear()
    assert journal.last_seq() == 0


def test_a_reader_of_a_file_journal_sees_the_writers_latest_request(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with Journal.open(path) as writer, Journal.open(path) as reader:
        assert reader.last_seq() == 0
        seq = _request(writer)
        assert reader.last_seq() == seq
        assert _request(writer) == reader.last_seq() == seq + 1
