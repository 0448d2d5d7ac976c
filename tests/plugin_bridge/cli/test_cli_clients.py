"""``clients add | list | revoke``: a key printed once, imported keys, never a key listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugin_bridge.app.clients import ClientKeyError, ClientKeys
from plugin_bridge.cli import main
from plugin_bridge.cli.lock import acquire


def test_cli_add_list_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "d")]
    assert main(["clients", "add", "bot", "--scope", "read", *where]) == 0
    key = capsys.readouterr().out.strip()
    assert key.startswith("oab_") and len(key) >= 47
    assert main(["clients", "add", "pi", "--key", "short", *where]) == 2
    assert main(["clients", "add", "pi", "--key", "a-long-enough-token", *where]) == 0
    assert main(["clients", "add", "bot", *where]) == 2
    capsys.readouterr()
    assert main(["clients", "list", *where]) == 0
    listed = capsys.readouterr().out
    assert "bot" in listed and "read" in listed and "pi" in listed and "never" in listed
    assert key not in listed and "a-long-enough-token" not in listed
    store = ClientKeys(tmp_path / "d")
    assert store.identify("a-long-enough-token") is not None
    with pytest.raises(ClientKeyError):
        store.revoke("nobody")


def test_without_data_dir_the_running_servers_keys_are_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server started with --data-dir X: `clients add` without one adds the key to X (the
    vault's lock records it), so the running server takes it."""
    vault = tmp_path / "v"
    vault.mkdir()
    lock = acquire(vault)
    try:
        lock.announce("ws://127.0.0.1:1", tmp_path / "elsewhere", tmp_path / "server.json")
        assert main(["clients", "add", "bot", "--scope", "read", "--vault", str(vault)]) == 0
    finally:
        lock.release()
    key = capsys.readouterr().out.strip()
    assert ClientKeys(tmp_path / "elsewhere").identify(key) is not None
