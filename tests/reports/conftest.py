"""Fixtures for the report tests: campaign results built from the harness's pydantic models."""

from __future__ import annotations

import pytest

from killpoint.harness.results import CampaignResult
from tests.support.campaigns import empty_campaign, sample_campaign


@pytest.fixture
def campaign() -> CampaignResult:
    return sample_campaign()


@pytest.fixture
def empty() -> CampaignResult:
    return empty_campaign()
