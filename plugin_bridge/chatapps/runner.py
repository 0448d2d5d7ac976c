"""The bots ``serve`` runs: one task per configured bot, each started, watched and restarted
with backoff (1 s doubling to 60 s) when its app cannot be reached. A bot that fails never
stops ``serve`` or the other transports; its state is in ``health`` (:class:`BotState`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol

from plugin_bridge.app.bot_state import BotState
from plugin_bridge.app.turn.confirm import CHAT_APP_CONFIRM_TIMEOUT
from plugin_bridge.chatapps.core import ChatCore
from plugin_bridge.chatapps.redact import hide_in_logs
from plugin_bridge.chatapps.store import ChatAppStore
from plugin_bridge.chatapps.stream import EDIT_INTERVAL, BotRefused

if TYPE_CHECKING:
    from pathlib import Path

    from plugin_bridge.app.assistant import Assistant
    from plugin_bridge.app.settings.config import DiscordSettings, TelegramSettings
    from plugin_bridge.app.vault_tools import Writer
    from plugin_bridge.vault.vault import Vault

logger = logging.getLogger(__name__)

FIRST_BACKOFF: Final = 1.0
MAX_BACKOFF: Final = 60.0


class Adapter(Protocol):
    """A bot's connection to its app: started again after each failure (the answers under
    way go on), closed when the bot stops."""

    async def start(self) -> None:
        """Check the token and register the commands."""
        ...

    async def poll(self) -> None:
        """Take the app's events until cancelled; raise when the connection fails."""
        ...

    async def aclose(self) -> None: ...


Connect = Callable[[ChatCore, str], Adapter]
Diagnose = Callable[[BaseException], str]
"""The sentence for a failure (network down, …); raises :class:`BotRefused` when it is final."""


class ChatApps:
    """The configured bots (see the module docstring)."""

    def __init__(
        self,
        telegram: TelegramSettings | None,
        discord: DiscordSettings | None,
        assistant: Assistant,
        vault: Vault,
        writer: Writer,
        data_dir: Path,
        *,
        confirm_timeout: float = CHAT_APP_CONFIRM_TIMEOUT,
        edit_interval: float = EDIT_INTERVAL,
    ) -> None:
        self._configured = {"telegram": telegram, "discord": discord}
        self.assistant = assistant
        self.vault = vault
        self.writer = writer
        self.data_dir = data_dir
        self.confirm_timeout = confirm_timeout
        self.edit_interval = edit_interval
        self.states = [BotState(name) for name, bot in self._configured.items() if bot]
        self._store: ChatAppStore | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Start each configured bot in the background."""
        for state in self.states:
            settings = self._configured[state.name]
            assert settings is not None
            task = asyncio.create_task(self._run(state, settings), name=f"{state.name} bot")
            self._tasks.append(task)

    async def _run(self, state: BotState, settings: TelegramSettings | DiscordSettings) -> None:
        title = state.name.capitalize()
        if settings.bot_token is None:
            variable = f"AI_BRIDGE_{state.name.upper()}_BOT_TOKEN"
            state.failed(f"No bot token: set bot_token in [{state.name}] or {variable}.")
            return
        if not settings.allowed_users:
            state.failed(
                f"No allowed users: add your {title} user id to allowed_users in "
                f"[{state.name}] (obsidian-ai-bridge setup finds it)."
            )
            return
        token = settings.bot_token.get_secret_value()
        hide_in_logs(token)
        if self._store is None:
            self._store = ChatAppStore(self.data_dir)
        core = ChatCore(
            state.name,
            settings,
            self.assistant,
            self.vault,
            self.writer,
            self._store,
            confirm_timeout=self.confirm_timeout,
            edit_interval=self.edit_interval,
        )
        connect, diagnose = _adapter(state.name, settings.api_url)
        delay = FIRST_BACKOFF
        adapter = connect(core, token)  # one for the bot's life: answers under way go on
        try:
            while True:
                try:
                    await adapter.start()
                    state.running()
                    await adapter.poll()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    try:
                        sentence = diagnose(exc)
                    except BotRefused as refused:
                        state.failed(str(refused))
                        return
                    if state.state == "running":
                        delay = FIRST_BACKOFF
                    state.failed(f"{sentence}; retrying in {delay:.0f} s.")
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF)
        finally:
            await adapter.aclose()

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._store is not None:
            await self._store.execute(ChatAppStore.close)


def _adapter(name: str, api_url: str) -> tuple[Connect, Diagnose]:
    """How to connect bot ``name``, and what its failures mean (the adapter's module is
    imported here, when a bot of its kind is configured)."""
    if name == "telegram":
        from plugin_bridge.chatapps import telegram

        def connect(core: ChatCore, token: str) -> Adapter:
            return telegram.TelegramBot(core, token, api_url)

        return connect, telegram.diagnose
    from plugin_bridge.chatapps import discord

    def connect_discord(core: ChatCore, token: str) -> Adapter:
        return discord.DiscordBot(core, token, api_url)

    return connect_discord, discord.diagnose
