"""A fake Ollama as a process, for the plugin's browser test (a model runtime on this machine).

``python -m tests.fakes.ollama_server --port-file FILE`` listens on 127.0.0.1 (a free port,
written to FILE once it listens) and answers as Ollama does, in the bytes of
:mod:`tests.fakes.ollama`:

- ``GET /api/tags`` and ``POST /api/show``: the models of :data:`MODELS` and their
  ``capabilities`` (what ``runtimes/detect`` reads);
- ``POST /api/chat``: "Ollama says: <the last user message>", streamed as NDJSON (or one body
  when ``stream`` is false), with the requested model's name;
- anything else: Ollama's 404.

It stops on SIGTERM / SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path
from typing import Any

from tests.fakes.http import FakeHTTPServer, Recorded, Reply
from tests.fakes.ollama import error_reply, text_reply

MODELS: dict[str, list[str]] = {
    "llama3.1:8b": ["completion", "tools"],
    "gemma3:1b": ["completion"],
    "nomic-embed-text:latest": ["embedding"],
}


def route(request: Recorded) -> Reply:
    """Ollama's answer to one request."""
    if request.path == "/api/tags":
        return Reply.json({"models": [{"name": name, "model": name} for name in MODELS]})
    if request.path == "/api/show":
        model = request.json().get("model")
        if model not in MODELS:
            return error_reply(404, f"model '{model}' not found")
        return Reply.json({"capabilities": MODELS[model]})
    if request.path == "/api/chat":
        body: dict[str, Any] = request.json()
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        said = str(users[-1].get("content", "")) if users else ""
        model = str(body.get("model", ""))
        return text_reply(f"Ollama says: {said}", stream=body.get("stream", True), model=model)
    return error_reply(404, "404 page not found")


async def serve(port_file: Path) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with FakeHTTPServer() as server:
        server.route = route
        await asyncio.to_thread(port_file.write_text, str(server.port), encoding="utf-8")
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port-file", type=Path, required=True)
    asyncio.run(serve(parser.parse_args().port_file))


if __name__ == "__main__":
    main()
