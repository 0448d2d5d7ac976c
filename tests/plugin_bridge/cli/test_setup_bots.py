"""``setup`` for the chat-app bots, as a user runs it: the token checked against the Bot API /
Discord stand-in, the Telegram user id read from the /start the user sends, the table saved."""

from __future__ import annotations

import asyncio
import termios
import tomllib
from pathlib import Path

from plugin_bridge.app.settings.config import config_file
from tests.fakes import openai as fake
from tests.fakes.discord import TOKEN as DISCORD_TOKEN
from tests.fakes.discord import FakeDiscord
from tests.fakes.http import FakeHTTPServer
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.helpers.bots import USER
from tests.helpers.bridge import WAIT, wait_for
from tests.helpers.serve import run_cli
from tests.plugin_bridge.cli.test_cli_chat_pty import cli_in_terminal


async def test_telegram_setup_reads_the_user_from_start_and_saves_the_table(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    env = {"AI_BRIDGE_CONFIG": str(config)}
    async with FakeTelegram() as api:
        args = ("setup", "--telegram-token", TELEGRAM_TOKEN, "--telegram-api-url", api.url)
        running = asyncio.create_task(run_cli(tmp_path, *args, env=env))
        await wait_for(lambda: "getUpdates" in api.calls, 30)
        api.send(USER, "/start")
        code, out, err = await running
    assert code == 0, err
    assert "send /start to @vault_test_bot" in out
    saved = tomllib.loads(config.read_text())["telegram"]
    assert saved == {"bot_token": TELEGRAM_TOKEN, "allowed_users": [USER], "api_url": api.url}
    assert config.stat().st_mode & 0o777 == 0o600
    assert api.confirmed >= 1, "the /start is confirmed: serve's bot does not answer it"


async def test_a_refused_token_is_one_sentence_and_nothing_is_saved(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    async with FakeTelegram() as api, FakeDiscord() as discord:
        code, _, err = await run_cli(
            tmp_path,
            "setup",
            "--telegram-token",
            "999:wrong-token-entirely",
            "--telegram-api-url",
            api.url,
            env={"AI_BRIDGE_CONFIG": str(config)},
        )
        assert code == 2
        assert err.strip().startswith("Telegram refused that token")
        code, _, err = await run_cli(
            tmp_path,
            "setup",
            "--discord-token",
            "wrong",
            "--discord-user",
            "5",
            "--discord-api-url",
            discord.url,
            env={"AI_BRIDGE_CONFIG": str(config)},
        )
        assert code == 2
        assert err.strip().startswith("Discord refused that token")
    assert not config.exists()


async def test_discord_setup_checks_the_token_and_saves_the_user(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    async with FakeDiscord() as discord:
        code, out, err = await run_cli(
            tmp_path,
            "setup",
            "--discord-token",
            DISCORD_TOKEN,
            "--discord-user",
            str(USER),
            "--discord-api-url",
            discord.url,
            env={"AI_BRIDGE_CONFIG": str(config)},
        )
    assert code == 0, err
    assert "will answer user" in out
    saved = tomllib.loads(config.read_text())["discord"]
    assert saved["bot_token"] == DISCORD_TOKEN and saved["allowed_users"] == [USER]


async def test_setup_in_a_terminal_offers_the_telegram_bot(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """In a real terminal: after the provider, yes to Telegram, the token typed unseen, the
    /start sent to the bot; the table is saved beside the provider."""
    fake_http.enqueue(fake.models_reply("qwen3-8b"))
    async with FakeTelegram() as api:
        args = ("setup", "--base-url", fake_http.url + "/v1", "--telegram-api-url", api.url)
        async with cli_in_terminal(*args) as (process, terminal):
            await terminal.expect("Provider (anthropic, openai, ollama)")
            terminal.type("openai\r")
            await terminal.expect("Model [")
            terminal.type("\r")
            await terminal.expect("Chat with your vault from Telegram? [y/N]")
            terminal.type("y\r")
            await terminal.expect("Telegram bot token")
            await wait_for(lambda: not termios.tcgetattr(terminal.master)[3] & termios.ECHO)
            terminal.type(f"{TELEGRAM_TOKEN}\r")  # once the prompt reads unseen
            await terminal.expect("Chat with your vault from Discord? [y/N]")
            terminal.type("\r")
            await terminal.expect("send /start to @vault_test_bot")
            api.send(USER, "/start")
            async with asyncio.timeout(WAIT):
                await process.wait()
        assert process.returncode == 0, terminal.screen
        assert TELEGRAM_TOKEN not in terminal.screen, "typed unseen"
    saved = tomllib.loads(config_file().read_text())
    assert saved["model"] == "qwen3-8b"
    assert saved["telegram"]["allowed_users"] == [USER]
