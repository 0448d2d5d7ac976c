"""A fixed address: ``serve`` keeps its ports per vault across restarts (a client key keeps
working), picks another when one is taken, and ``--port 0`` is for one run only."""

from __future__ import annotations

import json
import signal
import socket
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from plugin_bridge.app.clients import ClientKeys
from tests.helpers.bridge import copy_example_vault
from tests.helpers.serve import START_WAIT, Served, start_serve

pytestmark = pytest.mark.asyncio


def ports_of(served: Served) -> tuple[int, int]:
    ws, http = urlsplit(str(served.info["url"])), urlsplit(str(served.info["httpUrl"]))
    assert ws.port is not None and http.port is not None
    return ws.port, http.port


async def stop(served: Served) -> str:
    served.process.send_signal(signal.SIGTERM)
    _, err = await served.process.communicate()
    assert served.process.returncode == 0
    return err.decode()


async def health(served: Served, key: str) -> int:
    async with httpx.AsyncClient(timeout=START_WAIT) as http:
        response = await http.get(
            f"{served.info['httpUrl']}/health", headers={"Authorization": f"Bearer {key}"}
        )
    return response.status_code


async def test_restart_keeps_ports_and_keys(tmp_path: Path) -> None:
    vault = copy_example_vault(tmp_path)
    info = ("--info-file", str(tmp_path / "server.json"))
    key = ClientKeys(tmp_path / "data").add("bot", "read")
    first = await start_serve(tmp_path, *info, vault=vault)
    ports = ports_of(first)
    assert await health(first, key) == 200
    await stop(first)
    saved = json.loads((tmp_path / "data" / "ports.json").read_text())
    assert (saved["ws"], saved["http"]) == ports

    second = await start_serve(tmp_path, *info, vault=vault)
    assert ports_of(second) == ports
    assert await health(second, key) == 200
    await stop(second)

    with socket.create_server(("127.0.0.1", ports[0])):  # someone else took the WebSocket's
        third = await start_serve(tmp_path, "--http-port", "0", *info, vault=vault)
        ws, http = ports_of(third)
        assert ws != ports[0] and http != ports[1]
        assert await health(third, key) == 200
        err = await stop(third)
    assert sum(f"port {ports[0]} (port) is taken" in line for line in err.splitlines()) == 1
    assert json.loads((tmp_path / "data" / "ports.json").read_text()) == saved
