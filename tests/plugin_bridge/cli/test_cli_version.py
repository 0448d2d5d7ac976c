"""``--version``: what the plugin runs (``uvx obsidian-ai-bridge --version``) before it lets uvx
start the server; it must succeed with the installed version and start nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugin_bridge import __version__
from tests.helpers.serve import run_cli

pytestmark = pytest.mark.asyncio


async def test_version_prints_the_installed_version_and_exits_0(tmp_path: Path) -> None:
    code, out, err = await run_cli(tmp_path, "--version")
    assert (code, out.strip(), err) == (0, f"obsidian-ai-bridge {__version__}", "")
    assert __version__ != "0+unknown"
