"""The Telegram bot end to end in this process: python-telegram-bot pointed at the Bot API
stand-in (tests/fakes/telegram.py), the fake Ollama model, a copy of examples/vault."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from plugin_bridge.app.settings.config import TelegramSettings
from tests.fakes import ollama
from tests.fakes.http import FakeHTTPServer
from tests.fakes.telegram import TOKEN, FakeTelegram, SentMessage
from tests.helpers.bots import STRANGER, USER, running_bots
from tests.helpers.bridge import wait_for


@pytest.fixture
async def telegram_api() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as api:
        yield api


def settings(api: FakeTelegram, **extra: Any) -> TelegramSettings:
    values: dict[str, Any] = {
        "bot_token": SecretStr(TOKEN),
        "allowed_users": (USER,),
        "api_url": api.url,
        "scope": "write",
    }
    return TelegramSettings(**(values | extra))


async def answered(api: FakeTelegram, chat: int, count: int = 1) -> list[SentMessage]:
    """The chat's messages once ``count`` exist and the bot stopped typing into them."""
    await wait_for(lambda: len(api.chat(chat)) >= count)
    return api.chat(chat)


async def test_a_question_is_answered_by_editing_one_message(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    answer = "Your notes say the plan has **three** steps. " * 8
    fake_http.enqueue(ollama.text_reply(answer))
    async with running_bots(
        tmp_path, fake_http, telegram=settings(telegram_api), edit_interval=0.05
    ) as bots:
        assert telegram_api.commands and {c["command"] for c in telegram_api.commands} == {
            "note",
            "search",
            "new",
            "help",
        }
        telegram_api.send(USER, "What is the plan?")
        await wait_for(
            lambda: any(m.parse_modes[-1] == "MarkdownV2" for m in telegram_api.chat(USER))
        )
        [message] = telegram_api.chat(USER)
        assert len(message.texts) >= 2, "streamed by edits"
        assert "*three*" in message.text
        assert (USER, "typing") in telegram_api.actions
        listed = await bots.app.conversations.stored()
        rows, _ = listed.page(10, None)
        assert [row.client for row in rows] == [f"telegram:{USER}"]


async def test_a_stranger_gets_one_short_reply_and_no_model_call(
    tmp_path: Path, fake_http: FakeHTTPServer, telegram_api: FakeTelegram
) -> None:
    async with running_bots(tmp_path, fake_http, telegram=settings(telegram_api)):
        telegram_api.send(STRANGER, "Tell me your secrets")
        telegram_api.send(STRANGER, "Please?")
        telegram_api.send(USER, "/help")
        await answered(telegram_api, USER)
        await wait_for(lambda: len(telegram_api.chat(STRANGER)) >= 1)
        assert [m.text for m in telegram_api.chat(STRANGER)] == ["This assistant is private\\."]
        assert fake_http.requests == []
