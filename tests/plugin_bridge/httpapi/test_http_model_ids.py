"""Model ids the providers accept are answered, from raw HTTP, the openai SDK and LangChain.

Two bridges over fake APIs that speak the real wire: one whose chat provider is Anthropic
(listing only dated ids, as its API does), with OpenAI and Ollama configured beside it; one whose
chat provider is Ollama (listing tagged names, ``llama3.2:latest``). An alias or an untagged
name is sent as the list has it; an id that names its provider and is not listed is 404
``model_not_found`` after at most one provider call (the list read again), naming close ids;
an id that names no provider goes to the chat provider once, as it is, and the provider's own
404 comes back as 404 ``model_not_found``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import openai
import pytest
import pytest_asyncio
from langchain_openai import ChatOpenAI
from openai.types.chat import ChatCompletionMessageParam
from pydantic import SecretStr

from plugin_bridge.app.settings.config import BridgeSettings
from tests.fakes import anthropic as anthropic_fake
from tests.fakes import ollama as ollama_fake
from tests.fakes import openai as openai_fake
from tests.fakes.http import FakeHTTPServer, Recorded, Reply
from tests.helpers.bridge import Bridge, running_bridge
from tests.plugin_bridge.httpapi.conftest import lists

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    # the anthropic SDK warns of the real end-of-life dates of the dated ids used here
    pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning"),
]

QUESTION: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hello?"}]
ANTHROPIC_CHAT = "claude-haiku-4-5-20251001"
DATED = ["claude-sonnet-4-5-20250929", "claude-sonnet-4-20250514", ANTHROPIC_CHAT]
"""What Anthropic's GET /v1/models gives: dated ids only."""
OLLAMA_CHAT = "qwen3:8b"
TAGGED = ["llama3.2:latest", OLLAMA_CHAT]
"""What Ollama's GET /api/tags gives: tagged names."""


@dataclass
class Apis:
    bridge: Bridge
    servers: dict[str, FakeHTTPServer]
    listed: dict[str, list[str]] = field(default_factory=dict)

    def calls(self) -> list[Recorded]:
        """Every request any provider got (lists and chats)."""
        return [r for server in self.servers.values() for r in server.requests]

    def chats(self, name: str) -> list[Recorded]:
        return [r for r in self.servers[name].requests if r.method == "POST"]

    def reset(self) -> None:
        for server in self.servers.values():
            server.requests.clear()
            server.replies.clear()
        self.bridge.app.assistant.routes.clear()

    def http(self) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {self.bridge.app.token}"}
        return httpx.AsyncClient(base_url=self.bridge.http_url, headers=headers, timeout=15)


def _ollama_route(server: FakeHTTPServer, names: list[str]) -> Callable[[Recorded], Reply]:
    def route(request: Recorded) -> Reply:
        if request.method == "GET" and request.path == "/api/tags":
            return ollama_fake.tags_reply(*names)
        if server.replies:
            return server.replies.pop(0)
        return Reply.json({"error": "fake server: no reply queued"}, status=599)

    return route


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hosted_apis(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Apis]:
    """Anthropic the chat provider; OpenAI and Ollama configured beside it."""
    async with (
        FakeHTTPServer() as anthropic,
        FakeHTTPServer() as openai_api,
        FakeHTTPServer() as ollama,
    ):
        config = BridgeSettings.model_construct(
            openai_api_key=SecretStr("sk-test"),
            base_urls={"openai": openai_api.url + "/v1", "ollama": ollama.url},
            openai_api_key_host=openai_api.url,
            max_tokens=512,
        )
        async with running_bridge(
            Path(tmp_path_factory.mktemp("hosted")),
            provider=anthropic_fake.make_provider(anthropic, max_attempts=1),
            provider_name="anthropic",
            model=ANTHROPIC_CHAT,
            settings=config,
            http=True,
        ) as bridge:
            apis = Apis(bridge, {"anthropic": anthropic, "openai": openai_api, "ollama": ollama})
            apis.listed = {"anthropic": list(DATED), "openai": ["gpt-4o"], "ollama": list(TAGGED)}
            anthropic.route = lists(
                anthropic, lambda: anthropic_fake.models_reply(*apis.listed["anthropic"])
            )
            openai_api.route = lists(
                openai_api, lambda: openai_fake.models_reply(*apis.listed["openai"])
            )
            ollama.route = _ollama_route(ollama, apis.listed["ollama"])
            yield apis


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def local_apis(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Apis]:
    """Ollama the chat provider."""
    async with FakeHTTPServer() as ollama:
        names = list(TAGGED)
        ollama.route = _ollama_route(ollama, names)
        async with running_bridge(
            Path(tmp_path_factory.mktemp("local")),
            provider=ollama_fake.make_provider(ollama, max_attempts=1),
            provider_name="ollama",
            model=OLLAMA_CHAT,
            settings=BridgeSettings.model_construct(max_tokens=512),
            http=True,
        ) as bridge:
            yield Apis(bridge, {"ollama": ollama}, {"ollama": names})


@pytest_asyncio.fixture(loop_scope="module")
async def hosted(hosted_apis: Apis) -> Apis:
    """The hosted bridge with no request recorded and no list kept."""
    hosted_apis.reset()
    return hosted_apis


@pytest_asyncio.fixture(loop_scope="module")
async def local(local_apis: Apis) -> Apis:
    """The local bridge with no request recorded and no list kept."""
    local_apis.reset()
    return local_apis


# -- the clients -------------------------------------------------------------------------------

Ask = Callable[[Apis, str], Awaitable[str]]


async def by_openai_sdk(apis: Apis, model: str) -> str:
    """The SDK with its default retries."""
    async with openai.AsyncOpenAI(
        api_key=apis.bridge.app.token, base_url=apis.bridge.http_url + "/v1"
    ) as sdk:
        reply = await sdk.chat.completions.create(model=model, messages=QUESTION)
    return reply.choices[0].message.content or ""


async def by_raw_http(apis: Apis, model: str) -> str:
    """What curl sends to /v1/chat/completions."""
    async with apis.http() as http:
        response = await http.post(
            "/v1/chat/completions", json={"model": model, "messages": QUESTION}
        )
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


async def by_llm_proxy(apis: Apis, model: str) -> str:
    """The LLM proxy's /chat, as the design's end-to-end step calls it."""
    async with apis.http() as http:
        response = await http.post("/chat", json={"model": model, "messages": QUESTION})
    assert response.status_code == 200, response.text
    return str(response.json()["content"])


async def by_langchain(apis: Apis, model: str) -> str:
    chat = ChatOpenAI(
        model=model,
        api_key=SecretStr(apis.bridge.app.token),
        base_url=apis.bridge.http_url + "/v1",
    )
    return str((await chat.ainvoke("Hello?")).content)


CLIENTS: list[Ask] = [by_openai_sdk, by_raw_http, by_llm_proxy, by_langchain]


# -- ids a provider accepts --------------------------------------------------------------------


@pytest.mark.parametrize("ask", CLIENTS, ids=lambda ask: ask.__name__)
@pytest.mark.parametrize(
    ("model", "sent"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
        ("claude-sonnet-4-0", "claude-sonnet-4-20250514"),
        ("claude-sonnet-4", "claude-sonnet-4-20250514"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929"),
    ],
)
async def test_an_anthropic_alias_is_sent_as_its_listed_dated_id(
    hosted: Apis, ask: Ask, model: str, sent: str
) -> None:
    hosted.servers["anthropic"].enqueue(anthropic_fake.text_reply("Hi there.", stream=False))
    assert await ask(hosted, model) == "Hi there."
    assert [r.json()["model"] for r in hosted.chats("anthropic")] == [sent]


@pytest.mark.parametrize("ask", CLIENTS, ids=lambda ask: ask.__name__)
async def test_an_untagged_ollama_name_is_its_latest(hosted: Apis, ask: Ask) -> None:
    hosted.servers["ollama"].enqueue(ollama_fake.text_reply("Local hi.", stream=False))
    assert await ask(hosted, "ollama/llama3.2") == "Local hi."
    assert [r.json()["model"] for r in hosted.chats("ollama")] == ["llama3.2:latest"]


@pytest.mark.parametrize("model", ["llama3.2", "ollama/llama3.2", "ollama:llama3.2"])
async def test_the_chat_provider_ollama_takes_untagged_names(local: Apis, model: str) -> None:
    local.servers["ollama"].enqueue(ollama_fake.text_reply("Local hi.", stream=False))
    assert await by_openai_sdk(local, model) == "Local hi."
    assert [r.json()["model"] for r in local.chats("ollama")] == ["llama3.2:latest"]


async def test_a_model_listed_after_the_list_was_kept_is_answered(hosted: Apis) -> None:
    async with hosted.http() as http:
        assert (await http.get("/v1/models")).status_code == 200  # every list read and kept
    hosted.listed["anthropic"].append("claude-opus-4-5-20251101")  # released since
    try:
        hosted.servers["anthropic"].enqueue(anthropic_fake.text_reply("Opus.", stream=False))
        assert await by_openai_sdk(hosted, "claude-opus-4-5") == "Opus."
    finally:
        hosted.listed["anthropic"].remove("claude-opus-4-5-20251101")
    assert [r.json()["model"] for r in hosted.chats("anthropic")] == ["claude-opus-4-5-20251101"]
    lists = [r for r in hosted.servers["anthropic"].requests if r.method == "GET"]
    assert len(lists) == 2  # the kept one, then once again for this id


async def test_an_id_the_chat_provider_lists_whole_stays_whole(hosted: Apis) -> None:
    """LM Studio lists ``openai/gpt-oss-20b``, a gateway ``anthropic/…``: the chat provider's
    ids, not OpenAI's ``gpt-oss-20b`` (its list is looked at once kept: read for another
    provider's id, it would cost that provider's requests a call when the chat provider is
    down)."""
    hosted.listed["anthropic"].append("openai/gpt-oss-20b")
    try:
        async with hosted.http() as http:
            await http.get("/v1/models")  # the chat provider's list kept
        hosted.servers["anthropic"].enqueue(anthropic_fake.text_reply("Whole.", stream=False))
        assert await by_openai_sdk(hosted, "openai/gpt-oss-20b") == "Whole."
    finally:
        hosted.listed["anthropic"].remove("openai/gpt-oss-20b")
    assert [r.json()["model"] for r in hosted.chats("anthropic")] == ["openai/gpt-oss-20b"]
    assert not hosted.chats("openai")


async def test_an_id_for_another_provider_costs_the_chat_provider_nothing(hosted: Apis) -> None:
    hosted.servers["openai"].enqueue(openai_fake.text_reply("From OpenAI.", stream=False))
    assert await by_openai_sdk(hosted, "openai/gpt-4o") == "From OpenAI."
    assert not hosted.servers["anthropic"].requests


# -- ids no provider serves --------------------------------------------------------------------


@pytest.mark.parametrize("kept", [False, True], ids=["no-list-kept", "list-kept"])
async def test_claude_nope_9_is_404_after_at_most_one_provider_call(
    hosted: Apis, kept: bool
) -> None:
    if kept:
        async with hosted.http() as http:
            await http.get("/v1/models")
        for server in hosted.servers.values():
            server.requests.clear()
    async with openai.AsyncOpenAI(
        api_key=hosted.bridge.app.token, base_url=hosted.bridge.http_url + "/v1"
    ) as sdk:
        with pytest.raises(openai.NotFoundError) as caught:
            await sdk.chat.completions.create(model="claude-nope-9", messages=QUESTION)
    assert caught.value.code == "model_not_found"
    message = caught.value.message
    assert "'claude-nope-9'" in message and "Anthropic" in message
    assert "claude-sonnet-4-5-20250929" in message  # the closest ids it lists
    assert len(hosted.calls()) <= 1
    assert not hosted.chats("anthropic")


@pytest.mark.parametrize(
    ("model", "label"), [("openai/gpt-nope", "OpenAI"), ("ollama/nope:7b", "Ollama")]
)
async def test_an_id_naming_its_provider_is_refused_with_no_chat(
    hosted: Apis, model: str, label: str
) -> None:
    async with hosted.http() as http:
        response = await http.post("/chat", json={"model": model, "messages": QUESTION})
    assert response.status_code == 404
    assert response.json()["error"] == "model_not_found"
    assert label in response.json()["message"]
    assert not [r for r in hosted.calls() if r.method == "POST" and "/show" not in r.path]


async def test_an_id_naming_no_provider_is_sent_once_as_it_is(hosted: Apis) -> None:
    """Sent unchanged, the list read again for it once (not at every request)."""
    async with hosted.http() as http:
        await http.get("/v1/models")  # every list read and kept
    for _ in range(2):
        hosted.servers["anthropic"].enqueue(anthropic_fake.text_reply("Gateway hi.", stream=False))
        assert await by_openai_sdk(hosted, "router/some-model") == "Gateway hi."
    sent = [r.json()["model"] for r in hosted.chats("anthropic")]
    assert sent == ["router/some-model"] * 2
    lists = [r for r in hosted.servers["anthropic"].requests if r.method == "GET"]
    assert len(lists) == 2  # the kept one, then once again for this id


async def refused_by_the_provider(apis: Apis, server: str, model: str, refusal: Reply) -> None:
    """The provider answers ``refusal`` to every chat: the client gets 404 model_not_found
    after one chat request."""
    apis.servers[server].enqueue(refusal, refusal, refusal)
    async with openai.AsyncOpenAI(
        api_key=apis.bridge.app.token, base_url=apis.bridge.http_url + "/v1"
    ) as sdk:
        with pytest.raises(openai.NotFoundError) as caught:
            await sdk.chat.completions.create(model=model, messages=QUESTION)
    assert caught.value.code == "model_not_found"
    assert len(apis.chats(server)) == 1


async def test_anthropics_not_found_error_is_model_not_found(hosted: Apis) -> None:
    refusal = anthropic_fake.not_found_reply("qwen/qwen3-4b")
    await refused_by_the_provider(hosted, "anthropic", "qwen/qwen3-4b", refusal)


async def test_ollamas_model_not_found_is_model_not_found(local: Apis) -> None:
    refusal = ollama_fake.not_found_reply("qwen/qwen3-4b")
    await refused_by_the_provider(local, "ollama", "qwen/qwen3-4b", refusal)


async def test_openais_model_not_found_is_model_not_found(hosted: Apis) -> None:
    # a listed model the API no longer serves
    await refused_by_the_provider(hosted, "openai", "gpt-4o", openai_fake.not_found_reply("gpt-4o"))


async def test_a_compatible_server_at_openais_base_url_is_reached_without_a_key(
    tmp_path: Path,
) -> None:
    """LM Studio set as OpenAI's base URL, with no OpenAI key: it can run there (the profile's
    rule, as for a fast model on it), so a client's ``openai/MODEL`` reaches it, with no key,
    and ``/v1/models`` lists its models."""
    async with FakeHTTPServer() as ollama, FakeHTTPServer() as lm_studio:
        ollama.route = _ollama_route(ollama, list(TAGGED))
        lm_studio.route = lists(lm_studio, lambda: openai_fake.models_reply("qwen-local"))
        settings = BridgeSettings.model_construct(
            base_urls={"openai": lm_studio.url + "/v1"}, max_tokens=512
        )
        async with running_bridge(
            tmp_path,
            provider=ollama_fake.make_provider(ollama, max_attempts=1),
            provider_name="ollama",
            model=OLLAMA_CHAT,
            settings=settings,
            http=True,
        ) as bridge:
            apis = Apis(bridge, {"ollama": ollama, "openai": lm_studio})
            async with apis.http() as http:
                listed = (await http.get("/v1/models")).json()
            lm_studio.enqueue(openai_fake.text_reply("From LM Studio.", stream=False))
            assert await by_openai_sdk(apis, "openai/qwen-local") == "From LM Studio."
    assert "openai/qwen-local" in [model["id"] for model in listed["data"]]
    assert [r.json()["model"] for r in apis.chats("openai")] == ["qwen-local"]
    assert lm_studio.requests and not any("authorization" in r.headers for r in lm_studio.requests)
