"""A real bridge server with a scripted model, for the plugin's integration and browser tests.

``python -m tests.fakes.demo_server --vault DIR --info-file FILE [--origin URL] [--delay S]``
serves ``DIR`` exactly as ``serve`` does (same router, vault layer and confirm round trip),
with a model that answers by keyword, so a test can drive each case from the chat input:

- "slow": a long answer streamed one word every ``--delay`` seconds (for Stop);
- "four edits": an ``edit_note`` call changing lines 2, 7, 12 and 17 of ``Plan.md``;
- "edit": an ``edit_note`` call changing lines 2 and 19 of ``Plan.md`` (two hunks to review);
- a rewrite (command/rewrite): the selection in capitals; text at the cursor: a fixed sentence;
- "write": a ``create_note`` call for ``Ideas/Kites.md``;
- "fail": an overloaded provider (a retryable error);
- "refused key", "runtime stopped", "missing model": the provider refusing the key, a local
  runtime that does not answer, a model that is not downloaded (the errors' ways out);
- anything else: "You said: <text>" citing [[Welcome]].

With ``--many-models N`` the model lists N more (an OpenRouter-sized list, for the switcher's
filter); ``--deep-model NAME`` sets the deep model. With ``--spent USD`` today's usage log
starts with one chat call that cost USD (a budget set below it is then used up: -32012). With
``--embedder`` the vault gets the fake embedder (semantic search and related notes, no
network). With ``--remote HOST:PORT`` it also opens ``serve --remote``'s listener (the same
code: TLS with the data folder's self-signed certificate, ``/ws``, client keys only), and
writes ``remote.json`` beside the info file: ``{"url", "cert"}``. It
writes its info file like ``serve`` and stops on SIGTERM / SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from llm_service import LLMError, LLMResponse, ToolCall, Usage
from llm_service.catalog import ModelInfo
from llm_service.errors import ErrorCode
from llm_service.events import ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from llm_service.providers.base import ChatRequest
from llm_service.providers.scripted import ScriptedProvider
from plugin_bridge.app.clients import OWNER_CALLER
from plugin_bridge.app.settings.config import BridgeSettings
from plugin_bridge.app.settings.providers import ProviderSetup, Route
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.app.turn.confirm import ask_client
from plugin_bridge.cli.remote import open_remote
from plugin_bridge.handlers import build_router
from plugin_bridge.httpapi.remote import start_remote
from plugin_bridge.httpapi.server import HttpServer
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.infofile import InfoRecord, remove_info_file, write_info_file
from plugin_bridge.wire.protocol import PROTOCOL_VERSION
from plugin_bridge.wire.security import DEFAULT_ALLOWED_ORIGINS
from plugin_bridge.wire.server import BridgeServer, start_server

PLAN = "".join(f"Step {n}: do thing {n}.\n" for n in range(1, 21))
SLOW_WORDS = 400


class DemoProvider(ScriptedProvider):
    """Answers by keyword of the last user message (see the module docstring)."""

    def __init__(self, delay: float, many_models: int = 0) -> None:
        super().__init__(model="demo-model")
        self.delay = delay
        self.many_models = many_models

    async def _list_models_once(self) -> list[ModelInfo]:
        vendors = ("acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell")
        many = [
            ModelInfo(
                f"{vendors[n % len(vendors)]}/model-{n}",
                f"{vendors[n % len(vendors)].title()} model {n}",
                32_000,
                4096,
                n % 3 != 0,
                supports_images=n % 4 == 0,
                input_price_per_mtok=0.5 + n % 5,
                output_price_per_mtok=1.5 + n % 7,
            )
            for n in range(self.many_models)
        ]
        return [
            ModelInfo("demo-model", "Demo model", 128_000, 8192, True),
            ModelInfo("demo-small", "Demo small (fast)", 32_000, 4096, True),
            ModelInfo("demo-embed", "Demo embeddings"),
            *many,
        ]

    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        self.requests.append(request)
        last = request.messages[-1]
        if last.tool_results_blocks:
            result = last.tool_results_blocks[0]
            verdict = "failed" if result.is_error else "is done"
            return _answer(f"The change {verdict}: {result.content[:200]}")
        text = last.text.split("\n\n<context>")[0]  # keywords are the user's, not a note's
        if "<selection>" in text or "at the cursor" in text:
            return _answer(_rewritten(text))
        for keyword, (code, message) in _FAILURES.items():
            if keyword in text:
                raise LLMError(message, code=code, provider=self.name)
        if "fail" in text:
            raise LLMError(
                "The model provider is overloaded (529); try again in a moment.",
                code="overloaded",
                provider=self.name,
                retryable=True,
            )
        if "four edits" in text:
            edits = [
                {"old_text": f"Step {n}: do thing {n}.", "new_text": f"Step {n}: done."}
                for n in (2, 7, 12, 17)
            ]
            return _calls(ToolCall("call_four", "edit_note", {"path": "Plan.md", "edits": edits}))
        if "edit" in text:
            edits = [
                {"old_text": "Step 2: do thing 2.", "new_text": "Step 2: do the better thing."},
                {"old_text": "Step 19: do thing 19.", "new_text": "Step 19: rest."},
            ]
            return _calls(ToolCall("call_edit", "edit_note", {"path": "Plan.md", "edits": edits}))
        if "write" in text:
            arguments = {"path": "Ideas/Kites.md", "content": "# Kites\n\nKites fly.\n"}
            return _calls(ToolCall("call_write", "create_note", arguments))
        if "slow" in text:
            return _answer(" ".join(f"word{n}" for n in range(SLOW_WORDS)))
        return _answer(f"You said: {text} See [[Welcome]].")

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        response = await self._chat_once(request)
        slow = "slow" in request.messages[-1].text.split("\n\n<context>")[0]
        for i, word in enumerate(response.text.split(" ")):
            if slow:
                await asyncio.sleep(self.delay)
            yield TextDelta(word if i == 0 else " " + word)
        for index, call in enumerate(response.tool_calls):
            yield ToolCallDelta(index, call.id, call.name, json.dumps(call.arguments))
        yield ResponseComplete(response)


_FAILURES: dict[str, tuple[ErrorCode, str]] = {
    "refused key": (
        "auth_error",
        "OpenAI refused the API key (401): the key was saved by setup or the settings tab: "
        "run `obsidian-ai-bridge setup` or open the setup card to give a new one.",
    ),
    "runtime stopped": (
        "network_error",
        "Could not reach Ollama at http://127.0.0.1:11434 (connection refused); is it running?",
    ),
    "missing model": (
        "invalid_request",
        "Ollama: model 'llama3.2' not found; download it with `ollama pull llama3.2`.",
    ),
}


def _rewritten(prompt: str) -> str:
    """The demo's rewrite: the selection in capitals, or a sentence to continue with."""
    start, end = prompt.find("<selection>\n"), prompt.find("\n</selection>")
    if start == -1:
        return "And then the wind carried the kites higher."
    return prompt[start + len("<selection>\n") : end].upper()


def _answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(120, len(text.split())), model="demo-model")


def _calls(call: ToolCall) -> LLMResponse:
    return LLMResponse(
        text="", tool_calls=[call], stop_reason="tool_use", usage=Usage(100, 20), model="demo-model"
    )


async def serve(
    vault_root: Path,
    info_file: Path,
    origins: list[str],
    delay: float,
    embedder: bool,
    remote_listen: str | None = None,
    spent: float | None = None,
    many_models: int = 0,
    deep_model: str | None = None,
) -> None:
    (vault_root / "Plan.md").write_text(PLAN, encoding="utf-8")
    vault = Vault(vault_root, info_file.parent / "data")
    if embedder:
        from llm_service.embedders.fake import FakeEmbedder

        vault.use_embedder(FakeEmbedder())
    await vault.start()
    token = secrets.token_urlsafe(32)
    app = BridgeApp(
        vault,
        confirm=ask_client(vault),
        providers=ProviderSetup(
            Route("openai", DemoProvider(delay, many_models), "demo-model"),
            settings=BridgeSettings.model_construct(deep_model=deep_model),
        ),
        token=token,
    )
    if spent is not None:
        record = app.spending.recorder(None, "chat", OWNER_CALLER)
        record("demo-model", Usage(1000, 100), spent, "openai")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    allowed = (*DEFAULT_ALLOWED_ORIGINS, *origins)
    async with await start_server(
        build_router(), app, allowed_origins=allowed, token=token
    ) as server:
        remote = None
        if remote_listen is not None:
            remote = await _start_remote(app, server, vault.data_dir, remote_listen, allowed)
            (info_file.parent / "remote.json").write_text(json.dumps(remote[1]), encoding="utf-8")
        write_info_file(info_file, InfoRecord(server.url, token, os.getpid(), PROTOCOL_VERSION))
        try:
            await stop.wait()
        finally:
            remove_info_file(info_file, token)
            if remote is not None:
                await remote[0].close()
    await app.aclose()
    await vault.close()


async def _start_remote(
    app: BridgeApp,
    server: BridgeServer[Any],
    data_dir: Path,
    listen: str,
    origins: tuple[str, ...],
) -> tuple[HttpServer, dict[str, str]]:
    """``serve --remote``'s listener on ``listen``: its server, and where it is."""
    opened = open_remote(BridgeSettings(remote_listen=listen, allowed_origins=origins), data_dir)
    if isinstance(opened, str):
        raise SystemExit(opened)
    remote = await start_remote(app, server, opened.sock, opened.gate, tls=opened.tls)
    where = {"url": opened.url, "cert": str(opened.tls[0]) if opened.tls else ""}
    return remote, where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--info-file", type=Path, required=True)
    parser.add_argument("--origin", action="append", default=[], help="another allowed Origin")
    parser.add_argument("--delay", type=float, default=0.02, help="seconds per word of 'slow'")
    parser.add_argument("--embedder", action="store_true", help="semantic search (fake embedder)")
    parser.add_argument("--remote", help="also serve --remote's listener on HOST:PORT")
    parser.add_argument("--spent", type=float, help="USD already spent today (a priced call)")
    parser.add_argument("--many-models", type=int, default=0, help="list N more models")
    parser.add_argument("--deep-model", help="the deep model (chat/send purpose deep)")
    args = parser.parse_args()
    asyncio.run(
        serve(
            args.vault,
            args.info_file,
            args.origin,
            args.delay,
            args.embedder,
            args.remote,
            args.spent,
            args.many_models,
            args.deep_model,
        )
    )


if __name__ == "__main__":
    main()
