"""The CJK side table holds only its index (no copy of the bigrams): edits and deletions
still leave nothing behind, and an older database keeps its rows through the upgrade."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from plugin_bridge.vault.lexical import index as index_module
from plugin_bridge.vault.lexical.index import SearchIndex
from plugin_bridge.vault.schema import MIGRATIONS, connect, migrate
from tests.plugin_bridge.vault.lexical.test_index import NOTES, paths, started, write_vault


def cjk_terms(db: Path) -> set[str]:
    """The bigram tokens the CJK side table's index holds (in at least one note)."""
    conn = connect(str(db))
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.cjk_terms USING fts5vocab(main, notes_cjk, 'row')")
        return {row[0] for row in conn.execute("SELECT term FROM temp.cjk_terms WHERE doc > 0")}
    finally:
        conn.close()


async def test_an_edited_or_deleted_cjk_note_leaves_no_bigram_behind(tmp_path: Path) -> None:
    root, db = tmp_path / "vault", tmp_path / "i.sqlite3"
    write_vault(root, {"会議.md": "# 東京の会議\n東京都で会議。", "Other.md": "plain words"})
    index = await started(root, db)
    try:
        assert {"東京", "京都", "会議"} <= cjk_terms(db)
        (root / "会議.md").write_text("# 大阪\n大阪で打ち合わせ。", encoding="utf-8")
        await asyncio.to_thread(index.notify_changed, "会議.md")
        terms = cjk_terms(db)
        assert {"大阪", "会議"} <= terms and not {"東京", "京都"} & terms  # 会議: the title
        assert paths(index, "大阪") == ["会議.md"] and paths(index, "東京") == []
        (root / "会議.md").unlink()
        await asyncio.to_thread(index.notify_changed, "会議.md")
        assert cjk_terms(db) == set() and paths(index, "大阪") == []
    finally:
        await index.close()


async def test_an_older_index_keeps_its_cjk_rows_without_reading_notes_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database indexed before ``011_cjk_index_only`` is upgraded in place: no note is read
    again, every CJK word is still found, and the side table no longer holds text."""
    root, db = tmp_path / "vault", tmp_path / "i.sqlite3"
    write_vault(root, NOTES)
    older = MIGRATIONS[:-1]
    assert MIGRATIONS[-1][0] == "011_cjk_index_only"
    monkeypatch.setattr(index_module, "migrate", lambda conn: migrate(conn, older))
    before = await started(root, db)
    found = {query: paths(before, query) for query in ("同步", "東京", "서울", "日本語")}
    await before.close()
    monkeypatch.undo()
    after: SearchIndex = await started(root, db)
    try:
        assert after.applied_migrations == ["011_cjk_index_only"]
        assert after.last_scan_stats.unchanged == len(NOTES)
        assert after.last_scan_stats.added == after.last_scan_stats.updated == 0
        assert {query: paths(after, query) for query in found} == found
        assert all(found.values())
    finally:
        await after.close()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT count(*) FROM notes_cjk WHERE text IS NOT NULL").fetchone()
        assert conn.execute("SELECT text FROM notes_cjk LIMIT 1").fetchone() == (None,)
    finally:
        conn.close()
