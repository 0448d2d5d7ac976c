"""``clients add | list | revoke``: a key printed once, imported keys, never a key listed."""

from __future__ import annotations

import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from plugin_bridge.app.clients import ClientKeyError, ClientKeys
from plugin_bridge.cli import main
from plugin_bridge.cli.lock import acquire
from plugin_bridge.vault.datadir import INFO_FILE_NAME, data_dir_for
from plugin_bridge.wire.infofile import InfoRecord, write_info_file


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


def test_ten_concurrent_adds_keep_ten_keys(tmp_path: Path) -> None:
    """Each add reads, changes and writes clients.json under its lock: none is lost."""
    start = threading.Barrier(10)

    def add(number: int) -> str:
        store = ClientKeys(tmp_path / "d")  # as ten processes: ten stores, ten lock handles
        start.wait()
        return store.add(f"phone-{number}", "read")

    with ThreadPoolExecutor(10) as pool:
        keys = list(pool.map(add, range(10)))
    store = ClientKeys(tmp_path / "d")
    assert sorted(record.name for record in store.list()) == sorted(f"phone-{n}" for n in range(10))
    assert all(store.identify(key) is not None for key in keys)


def test_clients_add_before_the_first_serve_makes_private_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The documented way to pair a phone before serving: the data folder (and every folder
    it made on the way) is 0700, the keys file and its lock 0600, whatever the umask."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    vault = tmp_path / "v"
    vault.mkdir()
    previous = os.umask(0o022)
    try:
        assert main(["clients", "add", "phone", "--vault", str(vault)]) == 0
    finally:
        os.umask(previous)
    capsys.readouterr()
    data = data_dir_for(vault)
    made = [data, *data.parents][: len(data.relative_to(tmp_path).parts) - 1]
    assert made and all(stat.S_IMODE(folder.stat().st_mode) == 0o700 for folder in made)
    files = sorted(path.name for path in data.iterdir())
    assert files == ["clients.json", "clients.json.lock"]
    assert all(stat.S_IMODE((data / name).stat().st_mode) == 0o600 for name in files)


@pytest.mark.parametrize("name", ["x\n", "x\r", "naïve", "a b", "../x", ""])
def test_an_unsafe_client_name_is_refused_in_one_sentence(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "d")]
    assert main(["clients", "add", name, *where]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a client name: use 1 to 64 letters" in err
    assert ClientKeys(tmp_path / "d").list() == []


def test_the_info_files_token_is_refused_as_a_client_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The owner's token imported as a key would let it in on the remote listener."""
    vault = tmp_path / "v"
    vault.mkdir()
    data = tmp_path / "d"
    token = "the-servers-own-token-0123456789"
    write_info_file(data / INFO_FILE_NAME, InfoRecord("ws://127.0.0.1:1", token, 1, 1))
    where = ["--vault", str(vault), "--data-dir", str(data)]
    assert main(["clients", "add", "pi", "--key", token, *where]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "server's own token" in err
    assert ClientKeys(data).identify(token) is None
