"""handoff_terms on hand-built histories: the handoff boundaries the steps declared, the
deadline the receiving step's output carries, and the writes to services after the handoff."""

from __future__ import annotations

from pydantic import JsonValue

from killpoint.contract.boundaries import HANDOFF_ACCEPTED, HANDOFF_SENT
from killpoint.harness.checkers.handoff import check_handoff
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    WORKFLOW,
    checkpoint,
    completed_run,
    hit,
    request,
    unreadable,
)

DEADLINE = 100.0
TERMS: dict[str, JsonValue] = {"accept_contract": {"deadline": DEADLINE, "accepted": True}}


def _handed_off(accepted_at: float | None, publish_at: float, *, terms: bool = True) -> History:
    """A handoff sent at t=1 (before any request), accepted at `accepted_at` (None: never),
    then one publication at `publish_at`."""
    hits = [hit(HANDOFF_SENT, 1, step="write_contract")]
    if accepted_at is not None:
        hits.append(hit(HANDOFF_ACCEPTED, accepted_at, step="accept_contract"))
    outputs = TERMS if terms else {}
    publish = request(
        1, "publish", service="publisher", key="r-1", time=publish_at, idempotency_key=None
    )
    return completed_run(
        hits=hits,
        requests=[publish],
        checkpoints=[checkpoint(1, "received"), checkpoint(2, "handoff_accepted", outputs=outputs)],
    )


def test_a_handoff_accepted_and_acted_on_before_its_deadline_is_true() -> None:
    verdict = check_handoff(_handed_off(50, 60), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "accepted and acted on before its deadline t=100.0"


def test_a_run_without_a_handoff_is_true() -> None:
    verdict = check_handoff(completed_run(), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "no handoff in this run"


def test_an_acceptance_after_the_deadline_is_false_citing_the_hit() -> None:
    verdict = check_handoff(_handed_off(150, 160), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "the handoff was accepted at t=150.0, after its deadline t=100.0"
    assert verdict.refs == [EvidenceRef(kind="hit", index=1)]


def test_acting_on_the_handoff_after_its_deadline_is_false() -> None:
    verdict = check_handoff(_handed_off(50, 160), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "acted on the handoff at t=160.0, after its deadline t=100.0"
    assert verdict.refs == [EvidenceRef(kind="request", index=1)]


def test_a_write_on_a_handoff_never_accepted_is_false_even_without_a_reader() -> None:
    verdict = check_handoff(unreadable(_handed_off(None, 60)), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "a service was written to on a handoff the receiver had not accepted"


def test_a_refused_handoff_with_nothing_done_on_it_is_true() -> None:
    refused = _handed_off(None, 60).model_copy(update={"requests": []})
    assert check_handoff(refused, WORKFLOW).valid is True


def test_an_acceptance_whose_terms_are_not_visible_is_unknown() -> None:
    for blind in (_handed_off(50, 60, terms=False), unreadable(_handed_off(50, 60))):
        verdict = check_handoff(blind, WORKFLOW)
        assert verdict.valid == "unknown"
        assert verdict.summary == "the handoff's terms (its deadline) are not visible"
