"""One bridge with the HTTP API for this folder's test modules' servers: Anthropic (the chat
provider) and OpenAI (routed to by ``openai/…``), both the real SDKs against fake APIs.

Each fake answers ``GET …/models`` with its ``Served`` list (``anthropic_models``,
``openai_models``) and every other request with the next queued reply.

``served`` is that bridge, one per test module (default settings); ``client`` the openai SDK
on its /v1 without retries, the fakes' recorded requests cleared. A module that needs other
settings calls ``serve_http`` itself (test_scope_said.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import openai
import pytest
import pytest_asyncio
from pydantic import SecretStr

from plugin_bridge.app.settings.config import BridgeSettings
from tests.fakes import anthropic as anthropic_fake
from tests.fakes import openai as openai_fake
from tests.fakes.http import FakeHTTPServer, Recorded, Reply
from tests.helpers.bridge import Bridge, running_bridge

CHAT_MODEL = "claude-test"
ANTHROPIC_MODELS = [CHAT_MODEL, "claude-haiku-4-5", anthropic_fake.MODEL]
OPENAI_MODELS = ["gpt-5.4-mini", "gpt-4o"]


@dataclass
class Served:
    bridge: Bridge
    anthropic: FakeHTTPServer
    openai: FakeHTTPServer
    anthropic_models: list[str] = field(default_factory=lambda: list(ANTHROPIC_MODELS))
    openai_models: list[str] = field(default_factory=lambda: list(OPENAI_MODELS))

    def chats(self, server: FakeHTTPServer) -> list[Recorded]:
        """The chat requests ``server`` got (model lists left out)."""
        return [r for r in server.requests if r.method == "POST"]

    def forget_models(self) -> None:
        """The bridge fetches each provider's model list again on its next request."""
        self.bridge.app.assistant.routes.clear()

    def http(self, token: str | None = None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token or self.bridge.app.token}"}
        return httpx.AsyncClient(base_url=self.bridge.http_url, headers=headers, timeout=15)


async def serve_http(tmp: Path, **settings: object) -> AsyncIterator[Served]:
    async with FakeHTTPServer() as anthropic, FakeHTTPServer() as openai:
        config = BridgeSettings.model_construct(
            openai_api_key=SecretStr("sk-test"),
            base_urls={"openai": openai.url + "/v1"},
            openai_api_key_host=openai.url,
            max_tokens=512,
            **settings,
        )
        async with running_bridge(
            tmp,
            provider=anthropic_fake.make_provider(anthropic, max_attempts=1),
            provider_name="anthropic",
            model=CHAT_MODEL,
            settings=config,
            http=True,
        ) as bridge:
            served = Served(bridge, anthropic, openai)
            anthropic.route = lists(
                anthropic, lambda: anthropic_fake.models_reply(*served.anthropic_models)
            )
            openai.route = lists(openai, lambda: openai_fake.models_reply(*served.openai_models))
            yield served


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    async for served in serve_http(tmp_path_factory.mktemp("http")):
        yield served


@pytest_asyncio.fixture(loop_scope="module")
async def client(served: Served) -> AsyncIterator[openai.AsyncOpenAI]:
    sdk = openai.AsyncOpenAI(
        api_key=served.bridge.app.token, base_url=served.bridge.http_url + "/v1", max_retries=0
    )
    served.anthropic.requests.clear()
    served.openai.requests.clear()
    yield sdk
    await sdk.close()


def lists(server: FakeHTTPServer, models: Callable[[], Reply]) -> Callable[[Recorded], Reply]:
    """A route: the model list for ``GET …/models``, else the next queued reply."""

    def route(request: Recorded) -> Reply:
        if request.method == "GET" and request.path.split("?")[0].endswith("/models"):
            return models()
        if server.replies:
            return server.replies.pop(0)
        return Reply.json({"error": "fake server: no reply queued"}, status=599)

    return route
