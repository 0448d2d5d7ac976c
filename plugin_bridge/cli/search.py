"""``search``: bring the vault's index up to date (incrementally), then print the best notes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Final, TextIO

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.vault import Vault

INDEX_TIMEOUT: Final = 600.0


async def search(
    vault_root: Path, query: str, *, limit: int, data_dir: Path | None, out: TextIO
) -> int:
    vault = Vault(vault_root, data_dir, watch=False)
    try:
        await vault.start()
    except VaultError as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        await vault.index.wait_until_idle(INDEX_TIMEOUT)
        found = await vault.search(query, limit)
        notes = vault.index.note_count
    except VaultError as exc:  # an operator search cannot answer (line:, section:…)
        print(exc, file=sys.stderr)
        return 2
    finally:
        await vault.close()
    print(f"{notes} notes indexed.", file=sys.stderr)
    if not found.hits:
        out.write(f"No notes match “{query}”.\n")
        return 0
    for rank, hit in enumerate(found.hits, 1):
        snippet = " ".join(hit.snippet.split())
        where = f" › {hit.heading}" if hit.heading else f" p. {hit.page}" if hit.page else ""
        out.write(f"{rank}. {hit.path} — {hit.title}{where} ({hit.score:.2f})\n   {snippet}\n")
    out.write(f"{len(found.hits)} results in {found.took_ms:.1f} ms\n")
    return 0


def run(vault: Path, query: str, *, limit: int, data_dir: Path | None) -> int:
    root = vault.expanduser()
    if limit < 1:
        print("--limit must be at least 1.", file=sys.stderr)
        return 2
    return asyncio.run(search(root, query, limit=limit, data_dir=data_dir, out=sys.stdout))
