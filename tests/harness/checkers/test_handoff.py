"""handoff_terms on hand-built histories: the handoff boundaries the steps declared, the
deadline the receiving step's output carries, and the writes to services after the handoff."""

from __future__ import annotations

from pydantic import JsonValue

from killpoint.contract.boundaries import HANDOFF_ACCEPTED, HANDOFF_SENT
from killpoint.fake_services.journal import RequestRecord
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


# -- the mutation score's survivors (issue 26, point 7) -------------------------------------


def _publish(seq: int, time: float) -> RequestRecord:
    return request(seq, "publish", service="publisher", key="r-1", time=time, idempotency_key=None)


def test_a_write_before_the_handoff_was_sent_is_not_done_on_it() -> None:
    """The services had seen request #1 when the handoff was sent: it is not the receiver's."""
    history = completed_run(
        hits=[hit(HANDOFF_SENT, 2, step="write_contract", journal_seq=1)],
        requests=[_publish(1, 1)],
    )
    verdict = check_handoff(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "the handoff was not accepted, and nothing was done on it"


def test_a_write_the_services_saw_before_the_acceptance_is_unaccepted() -> None:
    """The acceptance hit came when the services had seen request #1: #1 preceded it."""
    for seq, unaccepted in ((1, True), (2, False)):
        history = _handed_off(50, 60).model_copy(
            update={
                "hits": [
                    hit(HANDOFF_SENT, 1, step="write_contract"),
                    hit(HANDOFF_ACCEPTED, 50, step="accept_contract", journal_seq=1),
                ],
                "requests": [_publish(seq, 60)],
            }
        )
        verdict = check_handoff(history, WORKFLOW)
        assert (verdict.valid is False) is unaccepted


def test_an_unaccepted_write_cites_the_handoff_and_the_request() -> None:
    verdict = check_handoff(_handed_off(None, 60), WORKFLOW)
    assert verdict.evidence[0] == "handoff sent at t=1.0"
    assert verdict.evidence[1].startswith("journal #1: publisher.publish [r-1]")
    assert verdict.refs == [EvidenceRef(kind="request", index=1)]


def test_an_acceptance_without_a_recorded_sending_is_still_held_to_its_deadline() -> None:
    late = _handed_off(150, 160)
    alone = late.model_copy(update={"hits": late.hits[1:]})
    verdict = check_handoff(alone, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("the handoff was accepted at t=150.0")


def test_the_deadline_itself_is_already_too_late() -> None:
    accepted = check_handoff(_handed_off(DEADLINE, DEADLINE + 1), WORKFLOW)
    assert accepted.valid is False and accepted.summary.startswith("the handoff was accepted")
    acted = check_handoff(_handed_off(50, DEADLINE), WORKFLOW)
    assert acted.valid is False and acted.summary.startswith("acted on the handoff")
    assert acted.evidence[0] == "deadline t=100.0"


def test_the_terms_are_those_of_the_latest_trusted_checkpoint() -> None:
    """Renewed terms (t=200) hold over the first ones; a row that failed its check holds none."""
    renewed: dict[str, JsonValue] = {"accept_contract": {"deadline": 200}}
    base = _handed_off(150, 160)
    later = [*base.checkpoints, checkpoint(3, "published", outputs=renewed)]
    assert check_handoff(base.model_copy(update={"checkpoints": later}), WORKFLOW).valid is True
    forged = [*base.checkpoints, checkpoint(3, "published", outputs=renewed, trusted=False)]
    verdict = check_handoff(base.model_copy(update={"checkpoints": forged}), WORKFLOW)
    assert verdict.valid is False


def test_a_deadline_that_is_not_a_number_is_no_visible_term() -> None:
    not_numbers: list[JsonValue] = [{"deadline": True}, {"deadline": "soon"}, ["deadline", 100]]
    for terms in not_numbers:
        outputs: dict[str, JsonValue] = {"accept_contract": terms}
        base = _handed_off(50, 60)
        cps = [checkpoint(1, "received"), checkpoint(2, "handoff_accepted", outputs=outputs)]
        verdict = check_handoff(base.model_copy(update={"checkpoints": cps}), WORKFLOW)
        assert verdict.valid == "unknown"


def test_a_late_acceptance_cites_the_deadline_and_the_hit() -> None:
    verdict = check_handoff(_handed_off(150, 160), WORKFLOW)
    assert verdict.evidence == [
        "deadline t=100.0",
        "worker 0: accept_contract:handoff.accepted at t=150.0",
    ]


def test_writes_after_the_first_sending_are_on_the_handoff() -> None:
    """Sent again after request #1: #1 already came after the first sending."""
    resent = [
        hit(HANDOFF_SENT, 1, step="write_contract"),
        hit(HANDOFF_SENT, 3, step="write_contract", journal_seq=1),
    ]
    verdict = check_handoff(completed_run(hits=resent, requests=[_publish(1, 2)]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "a service was written to on a handoff the receiver had not accepted"


def test_of_many_unaccepted_writes_the_first_is_cited() -> None:
    history = _handed_off(None, 60)
    twice = history.model_copy(update={"requests": [_publish(1, 60), _publish(2, 61)]})
    verdict = check_handoff(twice, WORKFLOW)
    assert verdict.evidence[1].startswith("journal #1:")
    assert verdict.refs == [EvidenceRef(kind="request", index=1)]
