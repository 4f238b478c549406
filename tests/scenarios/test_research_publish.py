"""Seed 000's story: the CMS response is lost, and recovery still leaves exactly one post."""

from __future__ import annotations

import pytest

from killpoint.contract.boundaries import RECONCILE_LOOKED_UP, RESPONSE_READ
from killpoint.contract.records import RunStatus
from killpoint.harness.run.world import World
from killpoint.scenarios.research_publish import SCENARIO, check_draft
from tests.scenarios.conftest import applied, client, crash, effects_of, lose_response, run


def _slug(run_id: str) -> str:
    return str(SCENARIO.make_input(run_id)["slug"])


def test_lost_cms_response_is_reconciled_to_one_post(world: World) -> None:
    history = run(world, SCENARIO, "lost", network=lose_response("cms", "create_post"))

    publish = {hit.boundary for hit in history.hits if hit.step == "publish"}
    assert RECONCILE_LOOKED_UP in publish and RESPONSE_READ not in publish  # it was lost
    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    assert applied(history, "cms", _slug("lost")) == ["create_post"]


def test_death_after_the_post_was_created_leaves_one_post(world: World) -> None:
    history = run(world, SCENARIO, "died", crashes=(crash("publish", RESPONSE_READ),))

    assert history.deaths and history.final_status == RunStatus.COMPLETED, history.final_reason
    assert applied(history, "cms", _slug("died")) == ["create_post"]


def test_post_carries_the_uploaded_image(world: World) -> None:
    history = run(world, SCENARIO, "image")

    image, post = SCENARIO.expected_effects(SCENARIO.make_input("image"))
    (created,) = effects_of(history, "cms", post.business_key)
    with client(world) as http:
        body = http.get(f"/cms/posts/{created.resource_id}").json()
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
