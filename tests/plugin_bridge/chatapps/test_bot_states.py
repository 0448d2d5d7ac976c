"""What ``health`` says of each bot, and what ``config show`` shows of its token: a bot that
cannot start says why in one sentence and never stops the others."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from pydantic import SecretStr

from plugin_bridge.app.settings.config import (
    BridgeSettings,
    DiscordSettings,
    TelegramSettings,
    shown,
)
from plugin_bridge.handlers.session import health_of
from tests.fakes.discord import TOKEN as DISCORD_TOKEN
from tests.fakes.discord import FakeDiscord
from tests.fakes.http import FakeHTTPServer
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.helpers.bots import USER, running_bots


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_each_bot_reports_its_own_state(tmp_path: Path, fake_http: FakeHTTPServer) -> None:
    async with FakeDiscord() as discord:
        telegram = TelegramSettings(bot_token=SecretStr(TOKEN), allowed_users=())
        good = DiscordSettings(
            bot_token=SecretStr(DISCORD_TOKEN), allowed_users=(USER,), api_url=discord.url
        )
        async with running_bots(tmp_path, fake_http, telegram=telegram, discord=good) as bots:
            assert health_of(bots.app).bots == {
                "telegram": "failed: No allowed users: add your Telegram user id to "
                "allowed_users in [telegram] (obsidian-ai-bridge setup finds it).",
                "discord": "running",
            }


async def test_a_refused_token_fails_for_good_and_a_network_down_is_retried(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    async with FakeTelegram() as api:
        refused = TelegramSettings(
            bot_token=SecretStr("42:not-the-right-token"), allowed_users=(USER,), api_url=api.url
        )
        down = DiscordSettings(
            bot_token=SecretStr(DISCORD_TOKEN),
            allowed_users=(USER,),
            api_url=f"http://127.0.0.1:{closed_port()}/api/v10",
        )
        async with running_bots(tmp_path, fake_http, telegram=refused, discord=down) as bots:
            states = health_of(bots.app).bots
            assert states["telegram"].startswith("failed: The bot token was refused (getMe)")
            assert states["discord"] == (
                "failed: Discord cannot be reached (the network is down, or api_url is wrong); "
                "retrying in 1 s."
            )
            assert api.calls.count("getMe") == 1, "a refused token is not tried again"


def test_config_show_masks_the_bot_tokens() -> None:
    settings = BridgeSettings(
        telegram=TelegramSettings(bot_token=SecretStr(TOKEN), allowed_users=(USER,)),
        discord=DiscordSettings(bot_token=SecretStr(DISCORD_TOKEN)),
    )
    values = shown(settings)
    assert values["telegram"]["bot_token"] == f"{TOKEN[:4]}…{TOKEN[-2:]}"
    assert DISCORD_TOKEN not in str(values)


def test_the_token_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_BRIDGE_TELEGRAM_BOT_TOKEN", TOKEN)
    bot = TelegramSettings(allowed_users=(USER,))
    assert bot.bot_token is not None and bot.bot_token.get_secret_value() == TOKEN
