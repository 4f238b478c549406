from __future__ import annotations

import httpx

from killpoint.fake_services import CmsClient, InProcessServices


def test_same_slug_twice_makes_two_posts(services: InProcessServices, http: httpx.Client) -> None:
    cms = CmsClient(http)
    first = cms.create_post("launch", "Launch", "text")
    second = cms.create_post("launch", "Launch", "text")
    assert first.id != second.id
    assert [p.id for p in cms.posts_by_slug("launch")] == [first.id, second.id]
    assert services.journal.effects_by_business_key("cms") == {"launch": 2}


def test_posts_by_slug_proves_absence(http: httpx.Client) -> None:
    assert CmsClient(http).posts_by_slug("never-written") == []


def test_post_is_readable_by_id_with_its_image(http: httpx.Client) -> None:
    cms = CmsClient(http)
    post = cms.create_post("s", "T", "B", image_sha256="a" * 64)
    assert cms.get_post(post.id) == post
    assert cms.get_post("post_999999") is None


def test_posts_by_slug_requires_a_slug(http: httpx.Client) -> None:
    assert http.get("/cms/posts").status_code == 422
