"""Acknowledged means durable for every store the server writes, not only notes and turns: the
settings file, the client keys, the saved ports and the usage log are on disk (file and folder
synced, or the SQLite transaction committed in WAL mode) by the time the call that wrote them
returns, which is before any reply says so."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from llm_service.messages import Usage
from plugin_bridge.app.clients import ClientKeys
from plugin_bridge.app.conversations.usage_log import USAGE_FILE, UsageLog
from plugin_bridge.app.settings.config import save_config
from plugin_bridge.cli.ports import PORTS_FILE, bind_ports

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").exists(), reason="names synced files through /proc"
)


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The paths of every file and folder ``os.fsync`` is called on from now on."""
    paths: list[Path] = []
    fsync: Callable[[int], None] = os.fsync

    def recording(fd: int) -> None:
        fsync(fd)
        paths.append(Path(os.readlink(f"/proc/self/fd/{fd}")))

    monkeypatch.setattr(os, "fsync", recording)
    return paths


def _durable(target: Path, synced: list[Path]) -> None:
    """``target``'s bytes were synced (as itself or as the temp file renamed over it), then
    its folder (the rename)."""
    folder = target.parent.resolve()
    files = [p for p in synced if p != folder]
    assert files and all(p.parent == folder for p in files), synced
    assert folder in synced[synced.index(files[-1]) :], synced
    assert target.exists()


def test_the_settings_file(tmp_path: Path, synced: list[Path]) -> None:
    path = save_config({"provider": "ollama", "model": "llama3.1:8b"}, tmp_path / "config.toml")
    _durable(path, synced)


def test_the_client_keys(tmp_path: Path, synced: list[Path]) -> None:
    keys = ClientKeys(tmp_path)
    keys.add("phone", "chat")
    _durable(keys.path, synced)
    synced.clear()
    keys.revoke("phone")
    _durable(keys.path, synced)


def test_the_saved_ports(tmp_path: Path, synced: list[Path]) -> None:
    sockets = bind_ports("127.0.0.1", tmp_path, (None, None))
    for sock in sockets:
        sock.close()
    _durable(tmp_path / PORTS_FILE, synced)


def test_the_usage_log(tmp_path: Path) -> None:
    """Each provider call is committed when ``record`` returns (autocommit, WAL,
    synchronous=NORMAL: a kill -9 loses nothing recorded): another connection sees it."""
    log = UsageLog(tmp_path)
    log.record("c1", "chat", "ollama", "llama3.1:8b", Usage(10, 5), None)
    other = sqlite3.connect(tmp_path / USAGE_FILE)
    try:
        assert other.execute("SELECT COUNT(*) FROM usage").fetchone() == (1,)
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        other.close()
        log.close()
