from __future__ import annotations

import hashlib

import httpx
import pytest

from killpoint.fake_services import ArtifactCorrupt, ArtifactsClient, InProcessServices, NotFound
from tests.support.service_faults import plan, rule


def test_put_then_get_round_trips_by_content_address(
    services: InProcessServices, http: httpx.Client
) -> None:
    artifacts = ArtifactsClient(http)
    address = artifacts.put(b"model output", "text/plain")
    assert address == hashlib.sha256(b"model output").hexdigest()
    assert artifacts.get(address) == b"model output"
    assert http.get(f"/artifacts/{address}").headers["content-type"].startswith("text/plain")
    [effect] = services.journal.applied_effects("artifacts")
    assert effect.business_key == address


def test_put_whose_bytes_do_not_match_the_address_is_rejected(http: httpx.Client) -> None:
    response = http.put(f"/artifacts/{'0' * 64}", content=b"data")
    assert response.status_code == 422
    assert response.json()["error"] == "hash_mismatch"


def test_reupload_of_the_same_bytes_applies_nothing_new(
    services: InProcessServices, http: httpx.Client
) -> None:
    artifacts = ArtifactsClient(http)
    artifacts.put(b"x")
    artifacts.put(b"x")
    assert len(services.journal.applied_effects("artifacts")) == 1
    assert services.journal.requests()[-1].outcome == "exists"


def test_corrupted_artifact_is_caught_by_its_hash(
    services: InProcessServices, http: httpx.Client
) -> None:
    artifacts = ArtifactsClient(http)
    address = artifacts.put(b"checkpointed result")
    services.set_plan(plan(rule("artifacts", "get", "corrupt_artifact", occurrence=None)))
    with pytest.raises(ArtifactCorrupt) as caught:
        artifacts.get(address)
    assert caught.value.expected == address != caught.value.actual
    assert artifacts.get(address, verify=False) != b"checkpointed result"


def test_missing_artifact_is_not_found_while_the_rule_holds(
    services: InProcessServices, http: httpx.Client
) -> None:
    artifacts = ArtifactsClient(http)
    address = artifacts.put(b"data")
    services.set_plan(plan(rule("artifacts", "get", "missing_artifact", occurrence=1)))
    with pytest.raises(NotFound):
        artifacts.get(address)
    assert artifacts.get(address) == b"data"


def test_unknown_artifact_is_not_found(http: httpx.Client) -> None:
    with pytest.raises(NotFound):
        ArtifactsClient(http).get("f" * 64)
