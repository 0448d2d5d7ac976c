"""The chat CLI in a real pseudo-terminal: Ctrl-C stops an answer, Ctrl-C at the prompt quits
with exit code 0, and no traceback is ever printed."""

from __future__ import annotations

import asyncio
import fcntl
import os
import sys
import termios
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from llm_service import LLMResponse, ScriptedProvider
from llm_service.providers.base import ChatRequest
from plugin_bridge.wire.infofile import InfoRecord, write_info_file
from tests.conftest import REPO_ROOT
from tests.helpers.bridge import WAIT, running_bridge


class Terminal:
    """The master side of a pty whose slave is the child's controlling terminal."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.screen = ""

    async def expect(self, text: str) -> None:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(WAIT):
            while text not in self.screen:
                ready = loop.create_future()
                loop.add_reader(self.master, ready.set_result, None)
                try:
                    await ready
                finally:
                    loop.remove_reader(self.master)
                try:
                    self.screen += os.read(self.master, 65536).decode(errors="replace")
                except OSError:  # the child closed the terminal
                    break
        assert text in self.screen, f"{text!r} not in {self.screen!r}"

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())


def _controlling_terminal() -> None:
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@asynccontextmanager
async def cli_in_terminal(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, Terminal]]:
    """``python -m plugin_bridge ARGS`` with a pty as its controlling terminal; killed on exit
    if it is still running."""
    master, slave = os.openpty()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "plugin_bridge", *args),
        cwd=REPO_ROOT,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        preexec_fn=_controlling_terminal,
    )
    os.close(slave)
    try:
        yield process, Terminal(master)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(master)


async def test_ctrl_c_stops_an_answer_then_quits_cleanly(tmp_path: Path) -> None:
    """Type a question, Ctrl-C while it is answered, Ctrl-C at the prompt: exit 0."""
    entered = asyncio.Event()

    async def slow(request: ChatRequest) -> LLMResponse:
        entered.set()
        await asyncio.sleep(WAIT)
        raise AssertionError("the answer was not stopped")

    async with running_bridge(tmp_path, provider=ScriptedProvider(slow)) as bridge:
        info_file = tmp_path / "server.json"
        write_info_file(info_file, InfoRecord(bridge.url, bridge.app.token, 1, 1))
        chat = ("chat", "--vault", str(bridge.vault.root), "--info-file", str(info_file))
        async with cli_in_terminal(*chat) as (process, terminal):
            await terminal.expect("you> ")
            terminal.type("tell me everything\r")
            await asyncio.wait_for(entered.wait(), WAIT)
            terminal.type("\x03")
            await terminal.expect("(stopped)")
            await terminal.expect("you> ")
            terminal.type("\x03")
            async with asyncio.timeout(WAIT):
                await process.wait()
        assert process.returncode == 0
        assert "Traceback" not in terminal.screen
