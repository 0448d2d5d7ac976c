"""Fixtures for every llm_service test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes import anthropic


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    """Every Anthropic provider a test made on the fake API is closed on the test's own event
    loop (left open, a later test would close it on a loop that has ended)."""
    yield
    await anthropic.close_providers()
