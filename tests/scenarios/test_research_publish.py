"""Seed 000's story: the CMS response is lost, and recovery still leaves exactly one post."""

from __future__ import annotations

import pytest

from killpoint.fake_services import FaultMode, FaultPlan, FaultRule
from killpoint.harness.contract.boundaries import RESPONSE_READ
from killpoint.harness.contract.records import RunStatus
from killpoint.scenarios.research_publish import SCENARIO, check_draft
from tests.scenarios.conftest import DieAt, Died, Harness


def test_lost_cms_response_is_reconciled_to_one_post(harness: Harness) -> None:
    harness.services.set_plan(
        FaultPlan.of(
            FaultRule(
                service="cms", operation="create_post", occurrence=1, mode=FaultMode.LOST_RESPONSE
            )
        )
    )
    workflow_id, inp = harness.start(SCENARIO, "lost")

    outcome = harness.drive(SCENARIO, workflow_id)

    assert outcome.status is RunStatus.COMPLETED, outcome.reason
    assert len(harness.services.journal.applied_effects("cms", str(inp["slug"]))) == 1


def test_death_after_the_post_was_created_leaves_one_post(harness: Harness) -> None:
    workflow_id, inp = harness.start(SCENARIO, "died")
    with pytest.raises(Died):
        harness.engine(SCENARIO, DieAt(RESPONSE_READ, step="publish")).resume(workflow_id)
    harness.after_death()

    outcome = harness.drive(SCENARIO, workflow_id)

    assert outcome.status is RunStatus.COMPLETED, outcome.reason
    assert len(harness.services.journal.applied_effects("cms", str(inp["slug"]))) == 1


def test_post_carries_the_uploaded_image(harness: Harness) -> None:
    workflow_id, inp = harness.start(SCENARIO, "image")
    harness.drive(SCENARIO, workflow_id)
    image, post = SCENARIO.expected_effects(inp)
    (created,) = harness.services.journal.applied_effects("cms", post.business_key)
    body = harness.http.get(f"/cms/posts/{created.resource_id}").json()
    assert body["image_sha256"] == image.business_key


@pytest.mark.parametrize(
    ("draft", "problem"),
    [
        ({"title": "", "body": "x " * 30, "cites": ["a"], "known_sources": ["a"]}, "title"),
        ({"title": "T", "body": "too short", "cites": ["a"], "known_sources": ["a"]}, "words"),
        ({"title": "T", "body": "x " * 30, "cites": [], "known_sources": ["a"]}, "cites no"),
        ({"title": "T", "body": "x " * 30, "cites": ["z"], "known_sources": ["a"]}, "did not"),
    ],
)
def test_unvalidated_model_output_is_refused(draft: dict[str, object], problem: str) -> None:
    found = check_draft(draft)  # type: ignore[arg-type]
    assert found is not None and problem in found
