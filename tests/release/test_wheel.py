"""The wheel alone, installed into a fresh virtual environment outside the repository, serves a
vault: built offline from uv's cache (the build backend may come from the registry when it is
not cached), its dependencies installed from uv.lock's cached wheels, then ``serve`` started
from the environment's ``bin/`` with the working directory outside the checkout."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from plugin_bridge.wire.client import BridgeClient
from plugin_bridge.wire.infofile import read_info_file
from tests.conftest import REPO_ROOT
from tests.helpers.bridge import copy_example_vault
from tests.helpers.serve import START_WAIT, cli_env


def _uv() -> list[str]:
    """uv as the Makefile finds it: on PATH, else the machine's python3 with ``-m uv``."""
    found = shutil.which("uv")
    return [found] if found else [shutil.which("python3") or sys.executable, "-m", "uv"]


def _run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_uv(), *map(str, args)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _build_wheel(out: Path) -> Path:
    """``uv build --wheel``, offline; again with the registry when the build backend (hatchling)
    is not in uv's cache (nothing else is fetched: the sources are the checkout)."""
    built = _run("build", "--wheel", "--offline", "--out-dir", out, "--python", sys.executable)
    if built.returncode != 0 and "hatchling" in built.stderr:
        built = _run("build", "--wheel", "--out-dir", out, "--python", sys.executable)
    assert built.returncode == 0, built.stderr
    (wheel,) = out.glob("obsidian_ai_bridge-*-py3-none-any.whl")
    return wheel


def _installed(tmp_path: Path) -> Path:
    """A fresh virtual environment in ``tmp_path`` with the wheel and its locked dependencies
    (from uv's cache); its ``bin/`` folder."""
    wheel = _build_wheel(tmp_path / "dist")
    venv = tmp_path / "venv"
    with zipfile.ZipFile(wheel) as built:
        names = built.namelist()
        metadata = built.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert b"License-Expression: MIT" in metadata
    steps = [
        ("venv", "--quiet", "--python", sys.executable, venv),
        ("sync", "--frozen", "--no-dev", "--no-install-project", "--offline", "--quiet"),
        ("pip", "install", "--offline", "--no-deps", "--python", venv / "bin" / "python", wheel),
        ("pip", "check", "--offline", "--python", venv / "bin" / "python"),
    ]
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv)}
    env.pop("VIRTUAL_ENV", None)
    for step in steps:
        done = _run(*step, env=env)
        assert done.returncode == 0, f"uv {step[0]}: {done.stderr}"
    return venv / "bin"


def _outside_env(tmp_path: Path) -> dict[str, str]:
    env = cli_env(tmp_path)
    env.pop("PYTHONPATH", None)
    return env


def _imported_from(python: Path, cwd: Path, env: dict[str, str]) -> Path:
    where = subprocess.run(
        [python, "-c", "import plugin_bridge; print(plugin_bridge.__file__)"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(where.stdout.strip())


@pytest.mark.timeout(300)
async def test_the_wheel_alone_serves_a_vault_from_a_fresh_environment(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    bin_dir = _installed(tmp_path)
    run_env = _outside_env(tmp_path)
    assert _imported_from(bin_dir / "python", outside, run_env).is_relative_to(bin_dir.parent)
    vault = copy_example_vault(tmp_path)
    info_file = tmp_path / "server.json"
    process = await asyncio.create_subprocess_exec(
        bin_dir / "obsidian-ai-bridge",
        "serve",
        "--vault",
        str(vault),
        "--data-dir",
        str(tmp_path / "data"),
        "--info-file",
        str(info_file),
        cwd=outside,
        env=run_env,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(START_WAIT):
            while not info_file.exists():
                assert process.returncode is None, "serve from the wheel exited before listening"
                await asyncio.sleep(0.02)
        info = read_info_file(info_file)
        client = await BridgeClient.connect(info.url, info.token, client_name="wheel-test")
        await client.close()
    finally:
        process.terminate()
        _out, err = await process.communicate()
    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert client.initialize_result is not None
    assert client.initialize_result.server.name == "obsidian-ai-bridge"
    assert client.initialize_result.server.version == version
    assert client.initialize_result.vault.name == "vault"
    assert process.returncode == 0, err.decode()
