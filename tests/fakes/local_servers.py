"""Servers of this machine, as a process, for the plugin's browser test: a model runtime (Ollama)
and the Hugging Face hub the embedder download reads (``HF_ENDPOINT``).

``python -m tests.fakes.local_servers --dir DIR`` listens on 127.0.0.1 (free ports, written to
``DIR/ollama.port`` and ``DIR/hub.port`` once both listen) and stops on SIGTERM / SIGINT.

The Ollama answers as Ollama does, in the bytes of :mod:`tests.fakes.ollama`:

- ``GET /api/tags`` and ``POST /api/show``: its models and their ``capabilities`` (what
  ``runtimes/detect`` reads): :data:`MODELS`, or the JSON object in ``DIR/models.json`` when
  that file exists (read at each request, so a test can take a model away);
- ``POST /api/chat``: "Ollama says: <the last user message>", streamed as NDJSON (or one body
  when ``stream`` is false), with the requested model's name. A setup turn (``complete_setup``
  among the tools) asks "What is this vault for?", and once the user has answered calls
  ``complete_setup`` with their answer; after the tool's result it thanks them;
- anything else: Ollama's 404.

The hub serves a tiny model2vec model as ``minishlab/potion-base-8M`` (:mod:`tests.fakes.hub`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.http import FakeHTTPServer, Recorded, Reply
from tests.fakes.hub import REPO, hub_route, tiny_model_folder
from tests.fakes.ollama import error_reply, text_reply, tool_reply

MODELS: dict[str, list[str]] = {
    "llama3.1:8b": ["completion", "tools"],
    "gemma3:1b": ["completion"],
    "nomic-embed-text:latest": ["embedding"],
}


def ollama_route(models_file: Path) -> Callable[[Recorded], Reply]:
    """Ollama's answer to one request, with the models of ``models_file`` (else MODELS)."""

    def models() -> dict[str, list[str]]:
        if models_file.is_file():
            loaded: dict[str, list[str]] = json.loads(models_file.read_text(encoding="utf-8"))
            return loaded
        return MODELS

    def route(request: Recorded) -> Reply:
        if request.path == "/api/tags":
            return Reply.json({"models": [{"name": name, "model": name} for name in models()]})
        if request.path == "/api/show":
            model = request.json().get("model")
            known = models()
            if model not in known:
                return error_reply(404, f"model '{model}' not found")
            return Reply.json({"capabilities": known[model]})
        if request.path == "/api/chat":
            return chat(request.json())
        return error_reply(404, "404 page not found")

    return route


def chat(body: dict[str, Any]) -> Reply:
    messages: list[dict[str, Any]] = body.get("messages", [])
    users = [m for m in messages if m.get("role") == "user"]
    said = str(users[-1].get("content", "")) if users else ""
    stream = bool(body.get("stream", True))
    tools = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    if "complete_setup" in tools:
        if messages and messages[-1].get("role") == "tool":
            return text_reply("Thank you, saved.", stream=stream)
        if len(users) < 2:
            return text_reply("What is this vault for?", stream=stream)
        content = f"# About me\n\n## What this vault is for\n\n{said}\n"
        return tool_reply([("call_setup", "complete_setup", {"content": content})], stream=stream)
    model = str(body.get("model", ""))
    return text_reply(f"Ollama says: {said}", stream=stream, model=model)


async def serve(folder: Path) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    model = await asyncio.to_thread(tiny_model_folder, folder / "hub-model")
    async with FakeHTTPServer() as ollama, FakeHTTPServer() as hub:
        ollama.route = ollama_route(folder / "models.json")
        hub.route = hub_route(REPO, model)
        for name, server in (("hub", hub), ("ollama", ollama)):  # ollama.port last: all listen
            port_file = folder / f"{name}.port"
            await asyncio.to_thread(port_file.write_text, str(server.port), encoding="utf-8")
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True, help="where to write the ports")
    asyncio.run(serve(parser.parse_args().dir))


if __name__ == "__main__":
    main()
