"""vault/list: the indexed notes a page at a time, in path order, each once however the pages
fall; a cursor the server did not give is -32602 saying what to do."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.bridge import running_bridge


async def test_pages_cover_every_note_once_in_path_order(tmp_path: Path) -> None:
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        indexed = bridge.vault.index.list_paths()
        whole = await wire.result("vault/list", {})
        listed, pages, cursor = [], 0, None
        while True:
            page = await wire.result("vault/list", {"cursor": cursor, "limit": 3})
            listed += page["notes"]
            pages += 1
            cursor = page["nextCursor"]
            if cursor is None:
                break
        bad = await wire.error("vault/list", {"cursor": "%%%"})
        too_many = await wire.error("vault/list", {"limit": 1001})
    assert [note["path"] for note in listed] == indexed == [n["path"] for n in whole["notes"]]
    assert whole["nextCursor"] is None and pages == -(-len(indexed) // 3)
    welcome = next(note for note in listed if note["path"] == "Welcome.md")
    assert welcome["size"] == (bridge.vault.root / "Welcome.md").stat().st_size
    assert welcome["title"]
    assert bad["code"] == -32602 and "list again from the start" in bad["message"]
    assert too_many["code"] == -32602
