"""``chat``: a terminal client over the same protocol as the plugin.

It finds the running server through the vault's info file, streams the model's text as it
arrives, shows each tool call and its result, and asks y/n when the model wants to write
(``tool/confirm``, with the diff). ``/clear`` starts over, ``/quit`` or end of input leaves.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final, TextIO

from plugin_bridge.wire.client import BridgeClient, RpcCallError
from plugin_bridge.wire.infofile import InfoFileError, default_info_file, read_info_file

Ask = Callable[[str], Awaitable[str | None]]
"""Prompt and read one line; None at end of input."""

PROMPT: Final = "you> "
RESULT_PREVIEW_CHARS: Final = 100


class ChatView:
    """Renders notifications and asks for confirmations."""

    def __init__(self, out: TextIO, ask: Ask) -> None:
        self.out = out
        self.ask = ask

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "chat/delta":
            self.write(str(params.get("text", "")))
        elif method == "chat/toolCall":
            arguments = json.dumps(params.get("arguments", {}), ensure_ascii=False)
            self.write(f"\n  [tool] {params.get('name')} {arguments}\n")
        elif method == "chat/toolResult":
            content = " ".join(str(params.get("content", "")).split())
            if len(content) > RESULT_PREVIEW_CHARS:
                content = content[:RESULT_PREVIEW_CHARS] + "…"
            label = "error" if params.get("isError") else "result"
            self.write(f"  [{label}] {content}\n")

    async def on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method != "tool/confirm":
            raise ValueError(f"unexpected server request {method}")
        arguments = json.dumps(params.get("arguments", {}), ensure_ascii=False)
        self.write(f"\n  The model wants to run {params.get('tool')} {arguments}\n")
        if params.get("preview"):
            self.write(str(params["preview"]).rstrip("\n") + "\n")
        answer = await self.ask("  Allow? [y/N] ")
        return {"approved": (answer or "").strip().lower() in {"y", "yes"}}


async def repl(client: BridgeClient, view: ChatView) -> None:
    """Read messages and send them until /quit or end of input."""
    conversation_id: str | None = None
    while True:
        line = await view.ask(PROMPT)
        if line is None or line.strip() in {"/quit", "/exit"}:
            return
        text = line.strip()
        if not text:
            continue
        if text == "/clear":
            if conversation_id is not None:
                await client.request("chat/clear", {"conversationId": conversation_id})
            view.write("(conversation cleared)\n")
            continue
        params: dict[str, Any] = {"text": text}
        if conversation_id is not None:
            params["conversationId"] = conversation_id
        view.write("ai> ")
        try:
            result = await client.request("chat/send", params)
        except RpcCallError as exc:
            view.write(f"\nerror: {exc.message}\n")
            continue
        except ConnectionError:
            view.write("\nThe server closed the connection.\n")
            return
        conversation_id = result["conversationId"]
        view.write(f"\n  ({usage_line(result)})\n")


def usage_line(result: dict[str, Any]) -> str:
    usage = result["usage"]
    cost = result.get("costUsd")
    price = f"${cost:.4f}" if isinstance(cost, (int, float)) else "cost unknown"
    return f"{usage['inputTokens']} in / {usage['outputTokens']} out tokens, {price}"


async def read_line(prompt: str) -> str | None:
    """``input()`` off the event loop; None at end of input."""
    try:
        return await asyncio.to_thread(input, prompt)
    except EOFError:
        return None


async def chat(info_path: Path, out: TextIO, ask: Ask) -> int:
    """Connect through the info file and run the REPL; the exit code."""
    try:
        info = read_info_file(info_path)
    except InfoFileError as exc:
        print(exc, file=sys.stderr)
        return 1
    from websockets.exceptions import WebSocketException

    view = ChatView(out, ask)
    try:
        client = await BridgeClient.connect(
            info.url,
            info.token,
            client_name="plugin_bridge.chat",
            on_notification=view.on_notification,
            on_request=view.on_request,
        )
    except (OSError, WebSocketException, RpcCallError) as exc:
        print(
            f"Cannot connect to the server at {info.url} ({exc}): is it still running?",
            file=sys.stderr,
        )
        return 1
    vault = client.initialize_result.get("vault", {})
    view.write(
        f"Connected to vault {vault.get('name')} ({vault.get('noteCount')} notes). "
        "/clear starts over, /quit leaves.\n"
    )
    try:
        await repl(client, view)
    finally:
        await client.close()
    return 0


def run(vault: Path, info_file: Path | None) -> int:
    path = info_file or default_info_file(vault.expanduser())
    return asyncio.run(chat(path, sys.stdout, read_line))
