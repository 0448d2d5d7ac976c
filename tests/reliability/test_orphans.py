"""Temp files left by a killed writer are removed at start; a write in progress is left alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

from plugin_bridge.vault.paths import TEMP_PREFIX
from plugin_bridge.vault.vault import Vault


async def test_start_removes_old_orphans_and_keeps_fresh_temp_files(tmp_path: Path) -> None:
    """Orphans older than a minute go (in any visible folder); younger ones and notes stay."""
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text("# Plan\n", encoding="utf-8")
    old = [root / f"{TEMP_PREFIX}dead", root / "Projects" / f"{TEMP_PREFIX}deadbeef"]
    fresh = root / f"{TEMP_PREFIX}inflight"
    an_hour_ago = time.time() - 3600
    for path in [*old, fresh]:
        path.write_bytes(b"half a note")
    for path in old:
        os.utime(path, (an_hour_ago, an_hour_ago))
    async with Vault(root, tmp_path / "data", watch=False):
        pass
    assert [path.exists() for path in old] == [False, False]
    assert fresh.exists()
    assert (root / "Projects" / "Plan.md").read_text(encoding="utf-8") == "# Plan\n"
