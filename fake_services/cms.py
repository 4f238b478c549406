"""cms: the service that is NOT idempotent.

Every create makes a new post, even with a slug that already exists, the way most content APIs
behave. A blind retry therefore leaves a visible duplicate; the list-by-slug lookup is what lets
an engine (or the oracle) prove whether a post is there before trying again.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from killpoint.fake_services._service import (
    Reply,
    RouteTable,
    Services,
    bind,
    error,
    parse,
    read_json,
)
from killpoint.fake_services.faults import Fault
from killpoint.fake_services.journal import RequestRecord
from killpoint.fake_services.models import Post, PostRequest


async def create_post(services: Services, request: Request) -> Response:
    body = await read_json(request)
    parsed = parse(PostRequest, body)
    state = services.state

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if isinstance(parsed, Reply):
            return parsed
        post = Post(id=state.next_id("post", "post"), created_at=record.time, **parsed.model_dump())
        document = post.model_dump()
        state.insert("post", post.id, document, lookup=post.slug)
        return Reply(201, document, resource_id=post.id, outcome="applied")

    return await services.handle(
        request,
        service="cms",
        operation="create_post",
        business_key=None if isinstance(parsed, Reply) else parsed.slug,
        body=body,
        work=work,
    )


async def posts_by_slug(services: Services, request: Request) -> Response:
    slug = request.query_params.get("slug")

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if not slug:
            return error(422, "invalid_request", message="query parameter slug is required")
        return Reply(200, {"posts": services.state.by_lookup("post", slug)})

    return await services.handle(
        request,
        service="cms",
        operation="posts_by_slug",
        business_key=slug,
        body={"slug": slug},
        work=work,
    )


async def get_post(services: Services, request: Request) -> Response:
    post_id = request.path_params["id"]

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        document = services.state.get("post", post_id)
        if document is None:
            return error(404, "not_found", outcome="not_found", id=post_id)
        return Reply(200, document, business_key=document["slug"])

    return await services.handle(
        request,
        service="cms",
        operation="get_post",
        business_key=None,
        body={"id": post_id},
        work=work,
    )


ROUTES: RouteTable = (
    ("POST", "/cms/posts", create_post),
    ("GET", "/cms/posts", posts_by_slug),
    ("GET", "/cms/posts/{id}", get_post),
)


def routes(services: Services) -> list[Route]:
    return bind(services, ROUTES)
