"""``chat``: a terminal client over the same protocol as the plugin.

It finds the running server through the vault's info file, streams the model's text as it
arrives, shows each tool call and its result, and asks y/n when the model wants to write
(``tool/confirm``, with the diff). Lines starting with ``/`` are commands handled here, never
sent to the model (``/help`` lists them). Ctrl-C during an answer cancels it on the server;
Ctrl-C at the prompt, ``/quit`` or Ctrl-D (end of input) leaves with exit code 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final, TextIO

from websockets.exceptions import WebSocketException

from plugin_bridge.cli.commandline import command_line
from plugin_bridge.vault.datadir import default_info_file
from plugin_bridge.wire.client import BridgeClient, RpcCallError, wire_params
from plugin_bridge.wire.infofile import InfoFileError, read_info_file
from plugin_bridge.wire.models import (
    CHAT_SEND,
    HEALTH,
    TOOL_CONFIRM,
    ChatDelta,
    ChatSendParams,
    ChatSendResult,
    ChatToolCall,
    ChatToolResult,
    Empty,
    NoteContext,
    ToolConfirmResult,
    dump,
)

ReadLine = Callable[[str], Awaitable[str | None]]
"""Prompt and read one line; None at end of input."""

PROMPT: Final = "you> "
RESULT_PREVIEW_CHARS: Final = 100
HELP: Final = (
    "/new starts a new conversation, /model shows the provider and model, /context NOTE.md sends "
    "that note with each message (/context alone lists them, /context clear drops them), /help "
    "shows this, /quit leaves (so do Ctrl-D and Ctrl-C at the prompt). Ctrl-C during an answer "
    "stops it.\n"
)


class Interrupts:
    """Ctrl-C presses, as an awaitable: the terminal's SIGINT handler calls :meth:`fire`."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        self._event.clear()


async def _first(work: Awaitable[Any], interrupts: Interrupts) -> tuple[bool, Any]:
    """``(False, result of work)``, or ``(True, None)`` if Ctrl-C came first (work cancelled)."""
    task = asyncio.ensure_future(work)
    interrupted = asyncio.ensure_future(interrupts.wait())
    try:
        await asyncio.wait({task, interrupted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        interrupted.cancel()
    if task.done():
        return False, task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return True, None


class ChatView:
    """Renders notifications and asks for confirmations."""

    def __init__(self, out: TextIO, ask: ReadLine) -> None:
        self.out = out
        self.ask = ask

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == ChatDelta.METHOD:
            self.write(ChatDelta.model_validate(params).text)
        elif method == ChatToolCall.METHOD:
            call = ChatToolCall.model_validate(params)
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            self.write(f"\n  [tool] {call.name} {arguments}\n")
        elif method == ChatToolResult.METHOD:
            result = ChatToolResult.model_validate(params)
            content = " ".join(result.content.split())
            if len(content) > RESULT_PREVIEW_CHARS:
                content = content[:RESULT_PREVIEW_CHARS] + "…"
            label = "error" if result.is_error else "result"
            self.write(f"  [{label}] {content}\n")

    async def on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method != TOOL_CONFIRM.method:
            raise ValueError(f"unexpected server request {method}")
        asked = TOOL_CONFIRM.params.model_validate(params)
        arguments = json.dumps(asked.arguments, ensure_ascii=False)
        self.write(f"\n  The model wants to run {asked.tool} {arguments}\n")
        if asked.preview:
            self.write(asked.preview.rstrip("\n") + "\n")
        answer = await self.ask("  Allow? [y/N] ")
        return dump(ToolConfirmResult(approved=(answer or "").strip().lower() in {"y", "yes"}))


async def repl(
    client: BridgeClient, view: ChatView, interrupts: Interrupts, *, setup: bool = False
) -> None:
    """Read messages and send them until /quit, end of input or Ctrl-C at the prompt. With
    ``setup`` every message is a turn of the setup conversation, which the assistant opens."""
    conversation_id: str | None = None
    notes: list[str] = []
    first: str | None = "" if setup else None
    while True:
        if first is None:
            interrupted, line = await _first(view.ask(PROMPT), interrupts)
            if interrupted or line is None:
                view.write("\n")
                return
            text = line.strip()
            if not text:
                continue
        else:
            text, first = first, None
        if text.startswith("/"):
            if text in {"/quit", "/exit"}:
                return
            if text in {"/new", "/clear"}:
                conversation_id = None
                view.write("(new conversation)\n")
            elif text == "/context" or text.startswith("/context "):
                view.write(context_command(notes, text.removeprefix("/context").strip()))
            else:
                view.write(await local_command(client, text))
            continue
        params = ChatSendParams(
            text=text,
            setup=setup,
            context=[NoteContext(note=note) for note in notes],
            conversation_id=conversation_id,
        )
        try:
            result = await send_turn(client, view, interrupts, params)
        except ConnectionError:
            view.write("\nThe server closed the connection.\n")
            return
        if result is not None:
            conversation_id = result.conversation_id


async def send_turn(
    client: BridgeClient, view: ChatView, interrupts: Interrupts, params: ChatSendParams
) -> ChatSendResult | None:
    """Send one chat/send and show its answer as it streams; the result, or None when it was
    stopped (Ctrl-C) or refused. A closed connection raises ConnectionError."""
    view.write("ai> ")
    try:
        call = await client.begin(CHAT_SEND.method, wire_params(params))
        interrupted, reply = await _first(call.reply, interrupts)
        if interrupted:
            await client.cancel(call.id)
            view.write("\n(stopped)\n")
            return None
    except RpcCallError as exc:
        view.write(f"\nerror: {exc.message}\n")
        return None
    result = CHAT_SEND.parse(reply)
    view.write(f"\n  ({usage_line(result)})\n")
    if result.sources:
        view.write(f"  sources: {', '.join(result.sources)}\n")
    return result


def context_command(notes: list[str], argument: str) -> str:
    """/context: list, add to (a note path) or clear the notes sent with each message."""
    if argument == "clear":
        notes.clear()
        return "(no notes sent as context)\n"
    if argument:
        if argument not in notes:
            notes.append(argument)
        return f"(sending {', '.join(notes)} with each message)\n"
    return f"Context: {', '.join(notes)}\n" if notes else "No notes are sent as context.\n"


async def local_command(client: BridgeClient, text: str) -> str:
    """What a /command prints (never sent to the model)."""
    if text == "/help":
        return HELP
    if text == "/model":
        health = await client.call(HEALTH, Empty())
        if not health.provider:
            return "No model provider is configured on the server.\n"
        return f"{health.provider}: {health.model}\n"
    return f"Unknown command {text.split()[0]}: /help lists the commands.\n"


def usage_line(result: ChatSendResult) -> str:
    usage, cost = result.usage, result.cost_usd
    price = f"${cost:.4f}" if cost is not None else "cost unknown"
    return f"{usage.input_tokens} in / {usage.output_tokens} out tokens, {price}"


async def read_line(prompt: str) -> str | None:
    """``input()`` in a daemon thread (so leaving never waits for a pending read); None at
    end of input."""
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str | None] = loop.create_future()

    def deliver(value: str | None) -> None:
        if not line.done():
            line.set_result(value)

    def read() -> None:
        try:
            value: str | None = input(prompt)
        except (EOFError, OSError, ValueError):
            value = None
        loop.call_soon_threadsafe(deliver, value)

    threading.Thread(target=read, daemon=True, name="chat-input").start()
    return await line


async def chat(
    info_path: Path,
    out: TextIO,
    ask: ReadLine,
    interrupts: Interrupts | None = None,
    *,
    vault: Path | None = None,
    setup: bool = False,
) -> int:
    """Connect through the info file and run the REPL; the exit code."""
    interrupts = interrupts or Interrupts()
    try:
        info = read_info_file(info_path)
    except InfoFileError as exc:
        if vault is not None and exc.missing:
            start = command_line("serve", "--vault", str(vault))
            print(f"No server is running for {vault}: start it with {start}", file=sys.stderr)
        else:
            print(exc, file=sys.stderr)
        return 1
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
    assert client.initialize_result is not None  # connect initialized it
    served = client.initialize_result.vault
    view.write(
        f"Connected to vault {served.name} ({served.note_count} notes). "
        "/help lists the commands; Ctrl-C stops an answer.\n"
    )
    if setup:
        view.write(
            "Introduce yourself: answer the assistant's questions; it then offers the context "
            "note for you to review.\n"
        )
    try:
        await repl(client, view, interrupts, setup=setup)
    finally:
        await client.close()
    return 0


def run(vault: Path, info_file: Path | None, *, setup: bool = False) -> int:
    path = info_file or default_info_file(vault.expanduser())

    async def main() -> int:
        interrupts = Interrupts()
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, interrupts.fire)
        return await chat(path, sys.stdout, read_line, interrupts, vault=vault, setup=setup)

    return asyncio.run(main())
