"""Shared fixtures: network ban, the user's folders and settings out of reach, fake HTTP server,
shared vault discovery."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.http import FakeHTTPServer

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_VAULTS = REPO_ROOT.parent / "shared" / "vaults" / "obsidian-help"


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test may reach past loopback."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded(method: Any) -> Any:
        def connect(self: socket.socket, address: Any) -> Any:
            if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address):
                raise OSError(f"network access is banned in tests (tried {address!r})")
            return method(self, address)

        return connect

    monkeypatch.setattr(socket.socket, "connect", guarded(real_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guarded(real_connect_ex))
    yield


USER_FOLDERS = (
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "APPDATA",
    "LOCALAPPDATA",
)
"""Where platformdirs (and so the settings file, the state and the caches) would look."""
USER_SETTINGS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "HF_HOME",
)
UV_CACHE = os.environ.get("UV_CACHE_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "uv"
)
"""uv's package cache, read before HOME moves: the wheel test installs offline from it."""


@pytest.fixture(autouse=True)
def _no_user_config(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads the machine's user: a HOME and XDG (and Windows) folders of its own, no
    settings file, no ``AI_BRIDGE_*`` variable and no provider key from the shell."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for name in USER_FOLDERS:
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in [*USER_SETTINGS, *(n for n in os.environ if n.startswith("AI_BRIDGE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UV_CACHE_DIR", UV_CACHE)
    monkeypatch.setenv("AI_BRIDGE_CONFIG", str(tmp_path / "no-settings-file.toml"))


@pytest.fixture
async def fake_http() -> AsyncIterator[FakeHTTPServer]:
    """A scripted HTTP server on 127.0.0.1 with a free port."""
    async with FakeHTTPServer() as server:
        yield server


def shared_vault(lang: str) -> Path:
    """The path of a shared obsidian-help vault, or skip the test when ../shared is absent."""
    path = SHARED_VAULTS / lang
    if not path.is_dir():
        pytest.skip(f"shared vault {path} is absent (clone has no ../shared/vaults)")
    return path
