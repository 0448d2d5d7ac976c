"""One bridge with the HTTP API for this folder's test modules' servers: Anthropic (the chat
provider) and OpenAI (routed to by ``openai/…``), both the real SDKs against fake APIs."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from plugin_bridge.app.settings.config import BridgeSettings
from tests.fakes import anthropic as anthropic_fake
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bridge import Bridge, running_bridge

CHAT_MODEL = "claude-test"


@dataclass
class Served:
    bridge: Bridge
    anthropic: FakeHTTPServer
    openai: FakeHTTPServer

    def http(self, token: str | None = None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token or self.bridge.app.token}"}
        return httpx.AsyncClient(base_url=self.bridge.http_url, headers=headers, timeout=15)


@pytest.fixture(scope="module")
def openai_base_url() -> Iterator[None]:
    """The routed OpenAI provider is built from the settings (no base URL of its own): the SDK
    then reads OPENAI_BASE_URL, which points it at the fake."""
    saved = os.environ.get("OPENAI_BASE_URL")
    yield
    if saved is None:
        os.environ.pop("OPENAI_BASE_URL", None)
    else:
        os.environ["OPENAI_BASE_URL"] = saved


async def serve_http(tmp: Path, **settings: object) -> AsyncIterator[Served]:
    async with FakeHTTPServer() as anthropic, FakeHTTPServer() as openai:
        os.environ["OPENAI_BASE_URL"] = openai.url + "/v1"
        config = BridgeSettings.model_construct(
            openai_api_key=SecretStr("sk-test"), max_tokens=512, **settings
        )
        async with running_bridge(
            tmp,
            provider=anthropic_fake.make_provider(anthropic, max_attempts=1),
            provider_name="anthropic",
            model=CHAT_MODEL,
            settings=config,
            http=True,
        ) as bridge:
            yield Served(bridge, anthropic, openai)
