"""One server per vault: a second serve is refused by name, a dead server's lock is taken over."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest

from plugin_bridge.cli.lock import LOCK_FILE
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


async def test_the_lock_of_a_killed_server_is_taken_over(tmp_path: Path) -> None:
    """SIGKILL leaves the lock file naming a dead pid; the next serve on the vault starts."""
    async with serve(tmp_path) as first:
        first.process.kill()
        await first.process.wait()
    lock = tmp_path / "data" / LOCK_FILE
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
