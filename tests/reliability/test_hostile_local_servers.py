"""Whatever listens on a runtime's port or plays the Hugging Face hub is not trusted (attack
items 10, 11 and the hub answer longer than its Content-Length of item 13 of issue 32):
``runtimes/detect`` answers bounded in size, models and time; ``embedder/download`` runs one
at a time, within a size limit and the free disk space. Full sizes under the ``soak`` marker."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import pytest

from llm_service import runtimes
from llm_service.runtimes import detect_runtimes
from tests.fakes.http import HANG, FakeHTTPServer, Recorded, Reply


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


async def _detect(route: Callable[[Recorded], Reply]) -> tuple[runtimes.Runtime, float]:
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
    assert elapsed < runtimes.RUNTIME_SECONDS + 3, elapsed  # + a loaded machine's slack


async def test_a_runtime_that_never_describes_its_models_is_over_in_2_s() -> None:
    """/api/show hangs: after RUNTIME_SECONDS the models are listed without capabilities."""
    found, elapsed = await _detect(_ollama(20, show=Reply.stream([HANG], "application/json")))
    assert found.reachable and [m.supports_tools for m in found.models] == [None] * 20
    assert runtimes.RUNTIME_SECONDS - 0.5 < elapsed < runtimes.RUNTIME_SECONDS + 3, elapsed


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
