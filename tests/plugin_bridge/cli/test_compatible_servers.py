"""OpenAI-compatible local servers (LM Studio, vLLM, llama.cpp): without --model the server's
loaded model is used, never an OpenAI model name."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.fakes import openai as fake
from tests.fakes.http import FakeHTTPServer, Reply
from tests.helpers.bridge import copy_example_vault, running_bridge
from tests.helpers.serve import START_WAIT, run_cli, serve

LOADED = "qwen2.5-7b-instruct"
EMBEDDER = "text-embedding-nomic-embed-text-v1.5"


@pytest.fixture(autouse=True)
def _state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The serve subprocess writes its info file where this process looks for it."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


async def test_serve_without_a_model_uses_the_model_the_server_has_loaded(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """LM Studio lists an embedding model and the loaded chat model: serve names the chat one."""
    fake_http.enqueue(fake.models_reply(EMBEDDER, LOADED))
    url = fake_http.url + "/v1"
    async with serve(tmp_path, "--provider", "openai", "--base-url", url) as served:
        assert served.process.stderr is not None
        lines: list[str] = []
        async with asyncio.timeout(START_WAIT):
            while not lines or not lines[-1].startswith("Ready. Try: "):
                line = (await served.process.stderr.readline()).decode()
                assert line, "serve ended before it was ready:\n" + "".join(lines)
                lines.append(line)
    assert f"Provider openai, model {LOADED}\n" in lines
    assert [r.path for r in fake_http.requests] == ["/v1/models"]


async def test_serve_fails_fast_when_the_server_has_no_chat_model_loaded(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """Only an embedding model is loaded: one sentence saying to load one, exit 2."""
    fake_http.enqueue(fake.models_reply(EMBEDDER))
    vault = copy_example_vault(tmp_path)
    code, _out, err = await run_cli(
        tmp_path,
        "serve",
        "--vault",
        str(vault),
        "--data-dir",
        str(tmp_path / "data"),
        "--provider",
        "openai",
        "--base-url",
        fake_http.url + "/v1",
    )
    assert code == 2 and "Traceback" not in err
    assert "has no chat model loaded" in err.strip().splitlines()[-1]


async def test_settings_update_to_a_local_server_chats_with_its_loaded_model(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """settings/update to provider openai with a base URL and no model: the next turn asks the
    server for the model it has loaded."""
    fake_http.enqueue(
        fake.models_reply(LOADED),  # the check of the new provider
        fake.models_reply(LOADED),  # which model it has loaded
        fake.text_reply("Hello from LM Studio.", model=LOADED),
    )
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        updated = await wire.result(
            "settings/update", {"provider": "openai", "baseUrl": fake_http.url + "/v1"}
        )
        reply = await wire.result("chat/send", {"text": "hi"})
    assert updated["models"]["chat"] == LOADED and reply["text"] == "Hello from LM Studio."
    assert fake_http.requests[-1].json()["model"] == LOADED


def _lm_studio_models(*models: tuple[str, str]) -> Reply:
    """LM Studio's own GET /api/v0/models: each model's id and state."""
    data = [{"id": i, "object": "model", "type": "llm", "state": s} for i, s in models]
    return Reply.json({"object": "list", "data": data})


async def test_with_several_models_listed_the_one_lm_studio_has_loaded_is_used(
    fake_http: FakeHTTPServer,
) -> None:
    """LM Studio with just-in-time loading lists every downloaded model on /v1/models; its own
    /api/v0/models says which is loaded, and that one is used."""
    fake_http.enqueue(
        fake.models_reply(EMBEDDER, "llama-3.2-3b-instruct", LOADED),
        _lm_studio_models(("llama-3.2-3b-instruct", "not-loaded"), (LOADED, "loaded")),
    )
    provider = fake.make_provider(fake_http)
    assert await provider.served_model() == LOADED
    assert [r.path for r in fake_http.requests] == ["/v1/models", "/api/v0/models"]


async def test_a_server_without_lm_studios_api_gets_its_first_chat_model(
    fake_http: FakeHTTPServer,
) -> None:
    """vLLM serving two models answers 404 to /api/v0/models: the first chat model listed."""
    fake_http.enqueue(
        fake.models_reply("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B"),
        Reply.json({"detail": "Not Found"}, status=404),
    )
    provider = fake.make_provider(fake_http)
    assert await provider.served_model() == "meta-llama/Llama-3.1-8B-Instruct"
