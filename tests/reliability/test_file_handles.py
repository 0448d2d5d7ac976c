"""Running out of file handles (a 256-file limit, macOS's default, and 300 idle TCP
connections): note reads and writes answer -32025 naming the cause, the accept loop backs off
with one logged line instead of a traceback per attempt, and all is well once they close."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.helpers.bridge import WAIT, Wire, init_params
from tests.helpers.serve import serve

LIMIT = 256
IDLE = 300


@pytest.mark.soak
async def test_out_of_file_handles_is_a_clear_error_and_one_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # where serve's info file is
    log = tmp_path / "serve.log"
    with open(log, "wb") as stderr:  # noqa: ASYNC230 - the subprocess writes it
        async with serve(tmp_path, stderr=stderr) as served:
            url, token = str(served.info["url"]), str(served.info["token"])
            wire = Wire(await connect(url, open_timeout=WAIT))
            await wire.result("initialize", init_params(token))
            resource.prlimit(served.process.pid, resource.RLIMIT_NOFILE, (LIMIT, LIMIT))
            host, port = url.removeprefix("ws://").split(":")
            idle = []
            for _ in range(IDLE):
                with contextlib.suppress(OSError):
                    idle.append(socket.create_connection((host, int(port)), timeout=WAIT))
            await asyncio.sleep(2.5)  # a few of asyncio's accept retries
            read = await wire.error("note/read", {"path": "Welcome.md"})
            write = await wire.error("note/create", {"path": "New.md", "content": "x"})
            for sock in idle:
                sock.close()
            await asyncio.sleep(1.5)
            again = await wire.result("note/read", {"path": "Welcome.md"})
            served.process.terminate()
            await served.process.wait()
    text = log.read_text(errors="replace")
    assert read["code"] == write["code"] == -32025, (read, write)
    assert "file" in read["message"] and "ulimit" in read["message"]
    assert read["data"]["reason"] == "no_file_handles"
    assert again["path"] == "Welcome.md"
    assert text.count("Out of file handles") == 1, text[-3000:]
    assert "out of system resource" not in text
    assert json.dumps(read)
