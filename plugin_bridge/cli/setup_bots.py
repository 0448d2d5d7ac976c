"""``setup``'s chat-app bots: paste a bot's token, it is checked (Telegram's ``getMe``,
Discord's ``GET /users/@me``), then the user's id (for Telegram, read from the ``/start`` the
user sends the bot; for Discord, pasted), and the ``[telegram]`` / ``[discord]`` table is
saved in the settings file (0600) for ``serve`` to start the bot."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from plugin_bridge.app.settings.config import (
    DiscordSettings,
    TelegramSettings,
    read_config,
    write_settings_file,
)
from plugin_bridge.chatapps.redact import hide_in_logs

if TYPE_CHECKING:
    import httpx
    import telegram

else:
    httpx = lazy.module("httpx")
    telegram = lazy.module("telegram")

START_WAIT: Final = 300.0
"""Seconds setup waits for the user's /start."""
TELEGRAM_URL: Final = TelegramSettings.model_fields["api_url"].default
DISCORD_URL: Final = DiscordSettings.model_fields["api_url"].default


class BotSetupError(Exception):
    """A bot cannot be set up; ``str()`` says what to fix."""


async def setup_telegram(
    token: str, user: int | None, api_url: str | None, wait: float = START_WAIT
) -> str:
    """Check ``token``, read the user's id from their /start (unless given), save
    ``[telegram]``; the sentence to print."""
    url = (api_url or TELEGRAM_URL).rstrip("/")
    hide_in_logs(token)
    bot = telegram.Bot(token, base_url=f"{url}/bot", base_file_url=f"{url}/file/bot")
    try:
        me = await bot.get_me()
    except telegram.error.InvalidToken:
        raise BotSetupError(
            "Telegram refused that token: copy the whole token BotFather gave (digits, a "
            "colon, then letters)."
        ) from None
    except telegram.error.NetworkError:
        raise BotSetupError(f"Telegram cannot be reached at {url}: check the network.") from None
    if user is None:
        print(f"Now send /start to @{me.username} in Telegram (waiting {wait / 60:.0f} minutes)…")
        user = await _start_sender(bot, wait)
    _save("telegram", token, user, api_url, TELEGRAM_URL)
    return f"Telegram bot @{me.username} will answer user {user}."


async def _start_sender(bot: telegram.Bot, wait: float) -> int:
    """The id of the first user who sends /start, the update confirmed (the served bot does
    not see it again)."""
    deadline = time.monotonic() + wait
    offset = 0
    while time.monotonic() < deadline:
        remaining = max(1, int(min(25, deadline - time.monotonic())))
        updates = await bot.get_updates(offset=offset + 1, timeout=remaining)
        for update in updates:
            offset = max(offset, update.update_id)
            message = update.message
            if message and message.from_user and (message.text or "").startswith("/start"):
                await bot.get_updates(offset=offset + 1, timeout=0)
                return message.from_user.id
    raise BotSetupError("No /start came in 5 minutes: run setup again and send it.")


async def setup_discord(token: str, user: int | None, api_url: str | None, ask: AskFn) -> str:
    """Check ``token`` with GET /users/@me, ask for the user's id (unless given), save
    ``[discord]``; the sentence to print."""
    url = (api_url or DISCORD_URL).rstrip("/")
    hide_in_logs(token)
    async with httpx.AsyncClient(timeout=10) as client:
        try:
            answer = await client.get(f"{url}/users/@me", headers={"Authorization": f"Bot {token}"})
        except httpx.HTTPError:
            raise BotSetupError(f"Discord cannot be reached at {url}: check the network.") from None
    if answer.status_code == 401:
        raise BotSetupError(
            "Discord refused that token: copy it again from the Developer Portal's Bot page."
        )
    name = str(answer.json().get("username", "your bot"))
    if user is None:
        given = ask(
            "Your Discord user id (Settings → Advanced → Developer Mode, then right-click "
            "yourself → Copy User ID): "
        ).strip()
        if not given.isdigit():
            raise BotSetupError("A Discord user id is a number like 987654321098765432.")
        user = int(given)
    _save("discord", token, user, api_url, DISCORD_URL)
    return f"Discord bot {name} will answer user {user} (in direct messages)."


AskFn = Callable[[str], str]


def _save(table: str, token: str, user: int, api_url: str | None, default: str) -> None:
    """Write the bot's table, keeping what else it held (scope, capture_note)."""
    values = dict(read_config().get(table) or {})
    values["bot_token"] = token
    users = [int(u) for u in values.get("allowed_users", []) if int(u) != user]
    values["allowed_users"] = [*users, user]
    if api_url is not None and api_url.rstrip("/") != default:
        values["api_url"] = api_url.rstrip("/")
    write_settings_file({table: values})


def _yes(ask: AskFn, question: str) -> bool:
    return ask(question).strip().lower().startswith("y")


def offer_bots(
    ask: AskFn | None,
    ask_secret: AskFn | None,
    telegram_token: str | None,
    telegram_user: int | None,
    telegram_url: str | None,
    discord_token: str | None,
    discord_user: int | None,
    discord_url: str | None,
) -> None:
    """Set up the bots the flags name, and (in a terminal) offer the others; a bot that
    cannot be set up raises :class:`BotSetupError` with the sentence to show."""
    if ask is not None and ask_secret is not None:
        if telegram_token is None and _yes(ask, "Chat with your vault from Telegram? [y/N]: "):
            telegram_token = ask_secret("Telegram bot token (from @BotFather): ").strip()
        if discord_token is None and _yes(ask, "Chat with your vault from Discord? [y/N]: "):
            discord_token = ask_secret("Discord bot token (Developer Portal → Bot): ").strip()
    if telegram_token:
        print(asyncio.run(setup_telegram(telegram_token, telegram_user, telegram_url)))
    if discord_token:
        if discord_user is None and ask is None:
            raise BotSetupError("Pass --discord-user with your Discord user id.")
        answer = ask or (lambda question: "")
        done = setup_discord(discord_token, discord_user, discord_url, answer)
        print(asyncio.run(done))
    if telegram_token or discord_token:
        print("Restart serve to start the bot.", file=sys.stderr)
