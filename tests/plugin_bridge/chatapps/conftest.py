"""The chat apps' stand-ins, running, for the bot tests here."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.discord import FakeDiscord
from tests.fakes.telegram import FakeTelegram


@pytest.fixture
async def telegram_api() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as api:
        yield api


@pytest.fixture
async def discord_api() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as api:
        yield api
