"""Whatever listens on a runtime's port or plays the Hugging Face hub is not trusted (attack
items 10, 11 and the hub answer longer than its Content-Length of item 13 of issue 32):
``runtimes/detect`` answers bounded in size, models and time; ``embedder/download`` runs one
at a time, within a size limit and the free disk space. Full sizes under the ``soak`` marker."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from llm_service import runtimes
from llm_service.embedders import hub
from llm_service.errors import LLMError
from llm_service.runtimes import detect_runtimes
from tests.fakes.http import HANG, FakeHTTPServer, Recorded, Reply
from tests.fakes.hub import REPO


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _ollama(
    models: int, *, show: Reply | None = None, tags_bytes: int = 0
) -> Callable[[Recorded], Reply]:
    """An "Ollama" listing ``models`` models (padded to ``tags_bytes``), answering ``show``
    (default: tools) to each /api/show."""

    def route(request: Recorded) -> Reply:
        if request.path == "/api/tags":
            names = [{"name": f"model-{n}", "pad": ""} for n in range(models)]
            if tags_bytes and names:
                names[0]["pad"] = "x" * tags_bytes
            return Reply.json({"models": names})
        return show or Reply.json({"capabilities": ["completion", "tools"]})

    return route


async def _detect(route: Callable[[Recorded], Reply]) -> tuple[runtimes.LocalRuntime, float]:
    async with FakeHTTPServer() as fake:
        fake.route = route
        started = time.perf_counter()
        found, _ = await detect_runtimes({"ollama": fake.url, "lmstudio": _closed_port()})
        return found, time.perf_counter() - started


@pytest.mark.parametrize("models", [1200])
async def test_a_runtime_with_thousands_of_models_lists_at_most_500_in_bounded_time(
    models: int,
) -> None:
    found, elapsed = await _detect(_ollama(models))
    assert found.reachable and len(found.models) == runtimes.MAX_MODELS
    assert found.models[0].id == "model-0"
    assert elapsed < runtimes.RUNTIME_SECONDS + 6, elapsed  # + a loaded machine's slack


async def test_a_runtime_that_never_describes_its_models_is_over_in_2_s() -> None:
    """/api/show hangs: after RUNTIME_SECONDS the models are listed without capabilities."""
    found, elapsed = await _detect(_ollama(20, show=Reply.stream([HANG], "application/json")))
    assert found.reachable and [m.supports_tools for m in found.models] == [None] * 20
    assert runtimes.RUNTIME_SECONDS - 0.5 < elapsed < runtimes.RUNTIME_SECONDS + 6, elapsed


@pytest.mark.parametrize("padding", [2 << 20])
async def test_an_answer_over_1_mib_is_not_read(padding: int) -> None:
    """A /api/tags answer over MAX_ANSWER_BYTES: the runtime counts as not answering."""
    found, _ = await _detect(_ollama(3, tags_bytes=padding))
    assert not found.reachable and found.models == ()


@pytest.mark.soak
async def test_full_size_runtime_answers() -> None:
    """The attack's sizes: 3,000 models, a 300 MB answer."""
    await test_a_runtime_with_thousands_of_models_lists_at_most_500_in_bounded_time(3000)
    await test_an_answer_over_1_mib_is_not_read(300 << 20)


class _LyingHub:
    """A "hub" on a raw socket: every file announced as ``announced`` bytes, ``sent`` sent."""

    def __init__(self, announced: int, sent: int) -> None:
        self.announced, self.sent = announced, sent
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await reader.readuntil(b"\r\n\r\n")
            head = f"HTTP/1.1 200 OK\r\ncontent-length: {self.announced}\r\n\r\n"
            writer.write(head.encode() + b"x" * self.sent)
            await writer.drain()
        writer.close()


async def test_a_hub_answer_longer_than_its_content_length_is_refused(tmp_path: Path) -> None:
    async with _LyingHub(announced=10, sent=100_000) as url:
        with pytest.raises(LLMError) as raised:
            await hub.download_model(REPO, tmp_path / "model", endpoint=url)
    assert raised.value.code in ("invalid_response", "network_error")
    assert "nothing was kept" in str(raised.value)
    assert not await asyncio.to_thread(lambda: list(tmp_path.iterdir()))


async def test_a_model_announced_over_the_limit_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    async with _LyingHub(announced=200 << 20, sent=1000) as url:
        with pytest.raises(LLMError) as raised:
            await hub.download_model(REPO, tmp_path / "model", endpoint=url, max_bytes=100 << 20)
    assert raised.value.code == "invalid_request" and "larger than" in str(raised.value)


async def test_one_download_at_a_time(tmp_path: Path) -> None:
    async with FakeHTTPServer() as fake:
        asked = asyncio.Event()

        def route(request: Recorded) -> Reply:
            asked.set()
            return Reply.stream([HANG], "application/octet-stream")

        fake.route = route
        first = asyncio.create_task(hub.download_model(REPO, tmp_path / "a", endpoint=fake.url))
        await asyncio.wait_for(asked.wait(), 30)
        with pytest.raises(LLMError) as raised:
            await hub.download_model(REPO, tmp_path / "b", endpoint=fake.url)
        first.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first
    assert "already under way" in str(raised.value)


async def test_a_disk_too_small_is_refused_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "SPARE_DISK_BYTES", shutil.disk_usage(tmp_path).free)
    async with _LyingHub(announced=1000, sent=1000) as url:
        with pytest.raises(LLMError) as raised:
            await hub.download_model(REPO, tmp_path / "model", endpoint=url)
    assert "free some space" in str(raised.value)
