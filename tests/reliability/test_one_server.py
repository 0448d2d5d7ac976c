"""One server per vault, whatever the data folder: a second serve is refused by name, a dead
server's lock is taken over, and `mcp` forwards to the running server whatever --data-dir it
was given."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
from pathlib import Path

import pytest

from plugin_bridge.cli.lock import lock_path
from tests.helpers.serve import START_WAIT, run_cli, serve


@pytest.fixture(autouse=True)
def _state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """default_data_dir in this process agrees with the subprocesses' XDG_STATE_HOME."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


async def test_a_second_server_on_the_same_vault_exits_2_naming_the_first(tmp_path: Path) -> None:
    """The second serve says which server runs (pid, URL); the first keeps its info file."""
    async with serve(tmp_path) as first:
        code, _out, err = await run_cli(
            tmp_path,
            "serve",
            "--vault",
            str(tmp_path / "vault"),
            "--data-dir",
            str(tmp_path / "data"),
        )
        assert code == 2
        assert f"pid {first.process.pid}" in err and str(first.info["url"]) in err
        assert len(err.strip().splitlines()) == 1
        assert json.loads(first.info_file.read_text()) == first.info
        first.process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(START_WAIT):
            assert await first.process.wait() == 0


async def test_two_servers_with_different_data_folders_on_one_vault(tmp_path: Path) -> None:
    """The lock is the vault's, not the data folder's: a serve with another --data-dir (and
    another info file) exits 2 naming the running server and its data folder, and an `mcp`
    given that other data folder forwards to the running server instead of serving."""
    async with serve(tmp_path) as first:
        vault = tmp_path / "vault"
        other = ("--data-dir", str(tmp_path / "other"), "--info-file", str(tmp_path / "o.json"))
        code, _out, err = await run_cli(tmp_path, "serve", "--vault", str(vault), *other)
        assert code == 2
        assert f"pid {first.process.pid}" in err and str(tmp_path / "data") in err
        record = json.loads(lock_path(vault).read_text())
        assert record == {
            "pid": first.process.pid,
            "url": first.info["url"],
            "dataDir": str(tmp_path / "data"),
            "infoFile": str(first.info_file.resolve()),
        }
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
        code, out, err = await run_cli(
            tmp_path, "mcp", "--vault", str(vault), *other, stdin=json.dumps(initialize).encode()
        )
        assert code == 0, err
        assert "Forwarding MCP to the server in" in err and str(first.info_file) in err
        assert json.loads(out.splitlines()[0])["result"]["serverInfo"]["name"]
        assert not (tmp_path / "other").exists()  # it opened no index of its own


async def test_the_lock_of_a_killed_server_is_taken_over(tmp_path: Path) -> None:
    """SIGKILL leaves the lock file naming a dead pid; the next serve on the vault starts."""
    async with serve(tmp_path) as first:
        first.process.kill()
        await first.process.wait()
    lock = lock_path(tmp_path / "vault")
    assert json.loads(lock.read_text())["pid"] == first.process.pid
    info_file = tmp_path / "second.json"
    async with serve(
        tmp_path, "--info-file", str(info_file), vault=tmp_path / "vault", stderr=None
    ) as second:
        assert second.info["pid"] == second.process.pid
        assert json.loads(lock.read_text())["pid"] == second.process.pid
        second.process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(START_WAIT):
            assert await second.process.wait() == 0


@pytest.mark.parametrize("command", ["serve", "search"])
async def test_an_unusable_index_path_is_one_sentence_and_exit_2(
    tmp_path: Path, command: str
) -> None:
    """A folder where the index file belongs: the command says where and what to pass."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (tmp_path / "data" / "index.sqlite3").mkdir(parents=True)
    args = ["kafka"] if command == "search" else []
    code, _out, err = await run_cli(
        tmp_path, command, *args, "--vault", str(vault), "--data-dir", str(tmp_path / "data")
    )
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert "index.sqlite3" in last and "--data-dir" in last
    assert "Traceback" not in err


@pytest.mark.parametrize("planted", ["symlink", "fifo"])
async def test_a_planted_lock_path_is_refused_in_one_sentence(tmp_path: Path, planted: str) -> None:
    """A symlink at the lock path is not followed (its target keeps its bytes, then and after),
    and a FIFO there is refused too: serve exits 2 with one sentence, no traceback."""
    vault = tmp_path / "vault"
    vault.mkdir()
    path = lock_path(vault)
    path.parent.mkdir(parents=True)
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    if planted == "symlink":
        path.symlink_to(target)
    else:
        os.mkfifo(path)
    code, _out, err = await run_cli(
        tmp_path, "serve", "--vault", str(vault), "--data-dir", str(tmp_path / "data")
    )
    assert code == 2
    assert err.strip().splitlines() == [
        f"The vault's lock path {path} is not a regular file (a symlink, FIFO or folder is "
        "there): remove it, then start again."
    ]
    assert target.read_text() == "keep me"
    assert path.is_symlink() if planted == "symlink" else stat.S_ISFIFO(path.lstat().st_mode)
