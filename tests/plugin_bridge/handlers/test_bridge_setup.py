"""The setup card's methods over a real WebSocket: runtimes/detect against fake Ollama and LM
Studio servers (and with nothing listening), embedder/download against a fake Hugging Face hub
(a finished download, a cut connection, refused ones, a cancel)."""

from __future__ import annotations

import asyncio
import socket
import time
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from plugin_bridge.app.settings.config import config_file
from tests.fakes.http import HANG, FakeHTTPServer, Recorded, Reply
from tests.fakes.hub import REPO, hub_route, tiny_model_folder
from tests.helpers.bridge import Bridge, running_bridge, wait_for

OLLAMA_MODELS = {
    "llama3.1:8b": ["completion", "tools"],
    "gemma3:1b": ["completion"],
    "nomic-embed-text:latest": ["embedding"],
}


def _ollama(request: Recorded) -> Reply:
    if request.path == "/api/tags":
        return Reply.json({"models": [{"name": name, "model": name} for name in OLLAMA_MODELS]})
    if request.path == "/api/show":
        return Reply.json({"capabilities": OLLAMA_MODELS[request.json()["model"]]})
    return Reply.json({"error": "not found"}, status=404)


def _lm_studio(request: Recorded) -> Reply:
    data = [
        {"id": "qwen3-8b", "type": "llm", "capabilities": ["tool_use"], "state": "loaded"},
        {"id": "gemma-3-1b", "type": "llm", "state": "not-loaded"},
        {"id": "text-embedding-nomic", "type": "embeddings", "state": "not-loaded"},
    ]
    if request.path == "/api/v0/models":
        return Reply.json({"object": "list", "data": data})
    return Reply.json({"error": "not found"}, status=404)


def _vllm(request: Recorded) -> Reply:
    """An OpenAI-compatible server without LM Studio's own API."""
    if request.path == "/v1/models":
        return Reply.json({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model"}]})
    return Reply.json({"error": "not found"}, status=404)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[Bridge]:
    async with running_bridge(tmp_path) as served:
        yield served


async def test_runtimes_detect_lists_each_runtimes_models_and_sends_no_key(
    bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with FakeHTTPServer() as ollama, FakeHTTPServer() as lm_studio:
        ollama.route, lm_studio.route = _ollama, _lm_studio
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{ollama.port}")
        monkeypatch.setenv("LMSTUDIO_HOST", lm_studio.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-never-sent-000000")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-sent-00")
        wire = await bridge.wire()
        found = await wire.result("runtimes/detect", {})
    ollama_found, lm_found = found["runtimes"]
    assert ollama_found == {
        "kind": "ollama",
        "baseUrl": ollama.url,
        "reachable": True,
        "models": [
            {"id": "llama3.1:8b", "supportsTools": True, "embedding": False},
            {"id": "gemma3:1b", "supportsTools": False, "embedding": False},
            {"id": "nomic-embed-text:latest", "supportsTools": False, "embedding": True},
        ],
    }
    assert lm_found == {
        "kind": "lmstudio",
        "baseUrl": lm_studio.url + "/v1",
        "reachable": True,
        "models": [
            {"id": "qwen3-8b", "supportsTools": True, "embedding": False},
            {"id": "gemma-3-1b", "supportsTools": None, "embedding": False},
            {"id": "text-embedding-nomic", "supportsTools": None, "embedding": True},
        ],
    }
    sent = [*ollama.requests, *lm_studio.requests]
    assert not [r for r in sent if {"authorization", "x-api-key"} & r.headers.keys()]
    assert all(b"never-sent" not in r.body for r in sent)


async def test_a_compatible_server_without_lm_studios_api_is_asked_its_models(
    bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with FakeHTTPServer() as vllm:
        vllm.route = _vllm
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{_closed_port()}")
        monkeypatch.setenv("LMSTUDIO_HOST", vllm.url)
        wire = await bridge.wire()
        found = await wire.result("runtimes/detect", {})
    assert found["runtimes"][1]["models"] == [
        {"id": "Qwen/Qwen3-8B", "supportsTools": None, "embedding": False}
    ]


async def test_runtimes_detect_with_nothing_listening_answers_at_once(
    bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both unreachable, in well under a second (a loose bound: the 300 ms target is measured
    by the benchmark)."""
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("LMSTUDIO_HOST", f"127.0.0.1:{_closed_port()}")
    wire = await bridge.wire()
    started = time.perf_counter()
    found = await wire.result("runtimes/detect", {})
    elapsed = time.perf_counter() - started
    assert [(r["kind"], r["reachable"], r["models"]) for r in found["runtimes"]] == [
        ("ollama", False, []),
        ("lmstudio", False, []),
    ]
    assert elapsed < 2.0


@pytest.fixture
async def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeHTTPServer]:
    async with FakeHTTPServer() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


def _leftovers(bridge: Bridge) -> list[str]:
    models = bridge.vault.data_dir / "models"
    return sorted(str(p.relative_to(models)) for p in models.rglob("*")) if models.exists() else []


async def test_embedder_download_fetches_the_model_reports_progress_and_uses_it(
    bridge: Bridge, hub: FakeHTTPServer, tmp_path: Path
) -> None:
    model = tiny_model_folder(tmp_path / "tiny")
    hub.route = hub_route(REPO, model)
    wire = await bridge.wire()
    request_id = await wire.request("embedder/download", {})
    reply = await wire.reply_to(request_id)
    folder = bridge.vault.data_dir / "models" / REPO
    assert reply["result"] == {"embedder": f"model2vec:{folder}"}
    total = sum(f.stat().st_size for f in model.iterdir())
    progress = wire.notes_of("embedder/downloadProgress", request_id)
    assert progress[-1] == {"requestId": request_id, "done": total, "total": total}
    assert all(0 < p["done"] <= p["total"] == total for p in progress)
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        assert (folder / name).read_bytes() == (model / name).read_bytes()
    assert _leftovers(bridge) == [
        "minishlab",
        "minishlab/potion-base-8M",
        *(f"minishlab/potion-base-8M/{n}" for n in ("config.json", "model.safetensors")),
        "minishlab/potion-base-8M/tokenizer.json",
    ]
    assert tomllib.loads(config_file().read_text())["embedder"] == f"model2vec:{folder}"
    health = await wire.result("health", {})
    assert health["index"]["embedder"]["model"] == "model2vec:potion-base-8M"
    await wait_for(lambda: bridge.vault.semantic is not None and bridge.vault.semantic.ready)
    assert [r.path for r in hub.requests][-1] == "/cdn/model.safetensors"


@pytest.mark.parametrize(
    ("refuse", "words"),
    [(401, "private or gated"), (404, "has no config.json"), (None, "cut off")],
)
async def test_a_failed_download_leaves_nothing_and_search_keeps_working(
    bridge: Bridge, hub: FakeHTTPServer, tmp_path: Path, refuse: int | None, words: str
) -> None:
    """A refused download (401, 404) and a connection cut in the middle of the weights: -32010
    with one sentence, nothing in the models folder, no embedder, lexical search answers."""
    model = tiny_model_folder(tmp_path / "tiny")
    hub.route = hub_route(REPO, model, refuse=refuse, stop_after=None if refuse else 100)
    wire = await bridge.wire()
    error = await wire.error("embedder/download", {"model": REPO})
    assert error["code"] == -32010 and words in error["message"], error
    assert _leftovers(bridge) in ([], ["minishlab"])
    assert bridge.vault.semantic is None and not config_file().exists()
    found = await wire.result("vault/search", {"query": "kafka"})
    assert found["mode"] == "lexical" and found["results"]


async def test_a_cancelled_download_leaves_nothing(
    bridge: Bridge, hub: FakeHTTPServer, tmp_path: Path
) -> None:
    hub.route = hub_route(REPO, tiny_model_folder(tmp_path / "tiny"), stop_after=100, stop=HANG)
    wire = await bridge.wire()
    request_id = await wire.request("embedder/download", {})
    await wait_for(lambda: any(r.path.startswith("/cdn/") for r in hub.requests))
    await asyncio.sleep(0.05)
    await wire.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}})
    reply = await wire.reply_to(request_id)
    assert reply["error"]["code"] == -32800
    assert _leftovers(bridge) in ([], ["minishlab"])
    assert bridge.vault.semantic is None


async def test_a_model_id_with_a_path_in_it_is_refused(bridge: Bridge) -> None:
    wire = await bridge.wire()
    error = await wire.error("embedder/download", {"model": "../../etc"})
    assert error["code"] == -32602
