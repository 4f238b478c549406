"""engine_failure on hand-built histories: true without a failure, false with the first one's
traceback as evidence and every other named."""

from __future__ import annotations

from killpoint.harness.checkers.failure import check_engine_failure
from killpoint.harness.history import FailureRecord
from killpoint.harness.results import EvidenceRef
from tests.support.histories import WORKFLOW, completed_run, unreadable

TRACE = 'Traceback (most recent call last):\n  File "x.py", line 1\njson.JSONDecodeError: bad\n'


def _failure(where: str) -> FailureRecord:
    return FailureRecord(where=where, error="JSONDecodeError: bad", traceback=TRACE)


def test_a_run_without_an_engine_exception_is_true_readable_or_not() -> None:
    assert check_engine_failure(completed_run(), WORKFLOW).valid is True
    assert check_engine_failure(unreadable(completed_run()), WORKFLOW).valid is True


def test_an_exception_of_the_engine_is_false_with_its_traceback() -> None:
    history = completed_run(failures=[_failure("worker 1"), _failure("history reader")])
    verdict = check_engine_failure(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "worker 1 raised JSONDecodeError: bad (and 1 more)"
    assert verdict.evidence[0] == "worker 1 raised JSONDecodeError: bad"
    assert "json.JSONDecodeError: bad" in verdict.evidence
    assert verdict.evidence[-1] == "history reader raised JSONDecodeError: bad"
    assert verdict.refs == [EvidenceRef(kind="worker", index=1)]


def test_a_single_exception_is_named_alone_and_cited_once() -> None:
    verdict = check_engine_failure(completed_run(failures=[_failure("worker 2")]), WORKFLOW)
    assert verdict.summary == "worker 2 raised JSONDecodeError: bad"
    assert verdict.evidence == [
        "worker 2 raised JSONDecodeError: bad",
        "Traceback (most recent call last):",
        '  File "x.py", line 1',
        "json.JSONDecodeError: bad",
    ]


def test_a_long_traceback_is_cited_by_its_last_twelve_lines_where_it_was_raised() -> None:
    deep = "".join(f"  frame {n}\n" for n in range(20))
    failure = FailureRecord(where="worker 0", error="KeyError: 'state'", traceback=deep)
    evidence = check_engine_failure(completed_run(failures=[failure]), WORKFLOW).evidence
    assert evidence[1:] == [f"  frame {n}" for n in range(8, 20)]
