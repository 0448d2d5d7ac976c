"""serve's lifetime: each thing started pushes its close on one exit stack, so a failure part-way
through start-up closes what was started, in reverse order, and lets the failure through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plugin_bridge.app.settings.config import BridgeSettings
from plugin_bridge.app.settings.providers import ProviderSetup
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.chatapps.runner import ChatApps
from plugin_bridge.cli import serving
from plugin_bridge.httpapi.server import HttpServer
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.security import bind_socket
from plugin_bridge.wire.server import BridgeServer
from tests.helpers.bridge import copy_example_vault


def _recording(monkeypatch: pytest.MonkeyPatch, closed: list[str]) -> None:
    """Each close of what serve starts recorded, then made."""
    for cls, name, label in (
        (Vault, "close", "vault"),
        (BridgeApp, "aclose", "app"),
        (BridgeServer, "close", "websocket server"),
        (HttpServer, "close", "http listener"),
        (ChatApps, "aclose", "bots"),
    ):
        real = getattr(cls, name)

        async def recorded(self: Any, real: Any = real, label: str = label) -> None:
            closed.append(label)
            await real(self)

        monkeypatch.setattr(cls, name, recorded)


async def _refused(*args: object, **kwargs: object) -> None:
    raise OSError("refused")


@pytest.mark.parametrize(
    ("failing", "closes"),
    [
        ("start_http", ["websocket server", "app", "vault"]),
        ("bots", ["bots", "http listener", "websocket server", "app", "vault"]),
    ],
    ids=["http-listener", "bots"],
)
async def test_a_failure_part_way_closes_what_was_started_in_reverse_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str, closes: list[str]
) -> None:
    """The HTTP listener cannot start once the WebSocket server listens, or the bots cannot
    start once everything else runs: serve raises that failure, after closing what it
    started, last first, each once (the HTTP listener too, once it listened)."""
    closed: list[str] = []
    _recording(monkeypatch, closed)
    if failing == "bots":
        monkeypatch.setattr(ChatApps, "start", _refused)
    else:
        monkeypatch.setattr(serving, "start_http", _refused)
    sockets = [bind_socket("127.0.0.1", 0), bind_socket("127.0.0.1", 0)]
    checked = (BridgeSettings(data_dir=tmp_path / "data"), ProviderSetup(None), None)
    try:
        with pytest.raises(OSError, match="refused"):
            await serving.serve(
                copy_example_vault(tmp_path), None, sockets, "token", checked, companion=None
            )
    finally:
        for sock in sockets:
            sock.close()
    assert closed == closes
