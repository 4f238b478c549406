"""The services' journal as the oracle reads it: a child effect (a refund) found under the key its
parent (the charge) was given, this run's parent and not a neighbour's, and nothing at all while
the parent has not happened."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from killpoint.fake_services.journal import Journal
from killpoint.harness.checkers.ground_truth import (
    applied,
    expected_records,
    resolve_key,
    sent_by,
)
from killpoint.harness.scenario import ExpectedEffect
from tests.support.histories import effect, signed

CHARGE = ExpectedEffect("payments", "order-1", operation="create_charge")
REFUND = ExpectedEffect("payments", "refund of order-1", operation="refund", parent=CHARGE)
MAIN, NEIGHBOUR = "tenant-a/run", "tenant-b/run"


@pytest.fixture
def journal() -> Iterator[Journal]:
    with Journal.memory() as journal:
        yield journal


def _apply(
    journal: Journal, operation: str, key: str, resource_id: str, origin: str | None = None
) -> None:
    """One request the payments service received and applied, as `resource_id`."""
    request = journal.record_request(
        "payments",
        operation,
        idempotency_key=None,
        business_key=key,
        fingerprint="f",
        time=1.0,
        origin=origin,
    )
    journal.apply_effect(request, resource_id)


def test_an_unsigned_record_belongs_to_every_run_and_a_signed_one_to_its_own() -> None:
    own = signed(effect(1), MAIN)
    assert sent_by(None, own) is True
    assert sent_by(MAIN, own) is True
    assert sent_by(NEIGHBOUR, own) is False
    assert sent_by(NEIGHBOUR, effect(1)) is True


def test_an_effect_without_a_parent_keeps_its_own_key(journal: Journal) -> None:
    assert resolve_key(CHARGE, journal) == "order-1"


def test_a_child_is_keyed_by_the_first_resource_its_parent_made(journal: Journal) -> None:
    """Charged twice (a duplicate): the refund refunds the first charge, ch_1."""
    _apply(journal, "refund", "order-1", "re_0")  # another operation under the order's key
    _apply(journal, "create_charge", "order-1", "ch_1")
    _apply(journal, "create_charge", "order-1", "ch_2")
    assert resolve_key(REFUND, journal) == "ch_1"


def test_a_child_has_no_key_while_its_parent_has_not_happened(journal: Journal) -> None:
    assert resolve_key(REFUND, journal) is None
    grandchild = ExpectedEffect("payments", "refund of the refund", parent=REFUND)
    assert resolve_key(grandchild, journal) is None


def test_a_child_is_keyed_by_its_own_runs_parent_not_a_neighbours(journal: Journal) -> None:
    _apply(journal, "create_charge", "order-1", "ch_9", origin=NEIGHBOUR)
    _apply(journal, "create_charge", "order-1", "ch_1", origin=MAIN)
    assert resolve_key(REFUND, journal, MAIN) == "ch_1"


def test_expected_records_carry_the_key_the_journal_gave_else_the_label(
    journal: Journal,
) -> None:
    assert [r.business_key for r in expected_records([CHARGE, REFUND], journal)] == [
        "order-1",
        "refund of order-1",
    ]
    _apply(journal, "create_charge", "order-1", "ch_1")
    assert [r.business_key for r in expected_records([REFUND], journal)] == ["ch_1"]


def test_a_child_was_applied_each_time_the_service_applied_it_under_its_key(
    journal: Journal,
) -> None:
    _apply(journal, "create_charge", "order-1", "ch_1")
    _apply(journal, "refund", "ch_1", "re_1")
    assert [e.resource_id for e in applied(REFUND, journal)] == ["re_1"]


def test_a_child_whose_parent_never_happened_was_never_applied(journal: Journal) -> None:
    _apply(journal, "refund", "ch_7", "re_7")  # some other charge's refund
    assert applied(REFUND, journal) == []
