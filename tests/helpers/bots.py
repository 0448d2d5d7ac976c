"""The chat-app bots in this process against a stand-in app (no tests here): a copy of
examples/vault served by :func:`tests.helpers.bridge.running_bridge` with the fake Ollama model,
and :class:`~plugin_bridge.chatapps.runner.ChatApps` started on it with the given settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plugin_bridge.app.settings.config import DiscordSettings, TelegramSettings
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.chatapps.runner import ChatApps
from tests.fakes import ollama
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bridge import running_bridge, wait_for

USER = 111
OTHER_USER = 222
STRANGER = 999


@dataclass
class Bots:
    app: BridgeApp
    bots: ChatApps
    vault: Path
    model: FakeHTTPServer


@asynccontextmanager
async def running_bots(
    tmp_path: Path,
    model: FakeHTTPServer,
    *,
    telegram: TelegramSettings | None = None,
    discord: DiscordSettings | None = None,
    **options: Any,
) -> AsyncIterator[Bots]:
    """The bridge with the fake model, and the configured bots started (and running)."""
    provider = ollama.make_provider(model)
    async with running_bridge(
        tmp_path, provider=provider, provider_name="ollama", model=ollama.MODEL
    ) as bridge:
        app = bridge.app
        bots = ChatApps(
            telegram,
            discord,
            app.assistant,
            bridge.vault,
            app.writes.write,
            bridge.vault.data_dir,
            **options,
        )
        app.bots = bots.states
        await bots.start()
        try:
            await wait_for(lambda: all(s.state != "starting" for s in bots.states))
            yield Bots(app, bots, bridge.vault.root, model)
        finally:
            await bots.aclose()
