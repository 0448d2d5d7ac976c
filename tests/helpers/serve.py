"""``serve`` as a subprocess, as a user starts it, shared by the CLI, conversation and
reliability tests (no tests here).

``async with serve(tmp_path, *args) as served`` starts ``python -m plugin_bridge serve`` on a copy
of examples/vault (or on ``vault=``) with its data dir in ``tmp_path / "data"`` and yields once
the info file exists; the process is killed on exit if it still runs. :func:`start_serve` does the
same without the cleanup, for tests that kill and restart the server themselves.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from plugin_bridge.vault.datadir import default_data_dir
from tests.conftest import REPO_ROOT
from tests.helpers.bridge import copy_example_vault

START_WAIT = 30.0
"""Generous bound for a subprocess to start on a loaded CI machine (not a speed target)."""


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["PYTHONUNBUFFERED"] = "1"
    return env


async def run_cli(
    tmp_path: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """``python -m plugin_bridge ARGS``: exit code, stdout, stderr (``env`` is added to the
    environment, whose API keys are removed)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "plugin_bridge",
        *args,
        cwd=REPO_ROOT,
        env={**cli_env(tmp_path), **(env or {})},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(START_WAIT * 2):
        out, err = await process.communicate(stdin)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@dataclass
class Served:
    process: asyncio.subprocess.Process
    info_file: Path
    info: dict[str, object]
    seconds_to_info_file: float


async def start_serve(
    tmp_path: Path,
    *args: str,
    vault: Path | None = None,
    stderr: int | IO[Any] | None = asyncio.subprocess.PIPE,
    env: dict[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
) -> Served:
    """Start `serve` on ``vault`` (default: a copy of examples/vault), with ``env`` added to its
    environment (``preexec`` runs in the child before serve, e.g. to lower a limit); return
    once its info file exists. The caller ends the process."""
    if vault is None:
        vault = copy_example_vault(tmp_path)
    info_file = default_data_dir(vault) / "server.json"
    if "--info-file" in args:
        info_file = Path(args[args.index("--info-file") + 1])
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "plugin_bridge",
        "serve",
        "--vault",
        str(vault),
        "--data-dir",
        str(tmp_path / "data"),
        *args,
        cwd=REPO_ROOT,
        env=cli_env(tmp_path) | (env or {}),
        stderr=stderr,
        preexec_fn=preexec,
    )
    try:
        async with asyncio.timeout(START_WAIT):
            while not info_file.exists():
                assert process.returncode is None, "serve exited before writing its info file"
                await asyncio.sleep(0.005)
    except BaseException:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    elapsed = time.perf_counter() - started
    return Served(process, info_file, json.loads(info_file.read_text()), elapsed)


@asynccontextmanager
async def serve(
    tmp_path: Path,
    *args: str,
    vault: Path | None = None,
    stderr: int | IO[Any] | None = asyncio.subprocess.PIPE,
) -> AsyncIterator[Served]:
    """Start `serve` on a copy of examples/vault; yield once its info file exists."""
    served = await start_serve(tmp_path, *args, vault=vault, stderr=stderr)
    try:
        yield served
    finally:
        if served.process.returncode is None:
            served.process.kill()
            await served.process.wait()
