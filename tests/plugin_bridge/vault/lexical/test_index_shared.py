"""SearchIndex on copies of the real Obsidian help vaults (skipped when ../shared is absent)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from plugin_bridge.vault.lexical.index import SearchIndex
from tests.conftest import shared_vault
from tests.plugin_bridge.vault.lexical.test_index import started

pytestmark = pytest.mark.shared_vault

Opener = Callable[[str], Awaitable[SearchIndex]]


@pytest.fixture
async def open_vault(tmp_path: Path) -> AsyncIterator[Opener]:
    """Copy a shared vault to tmp_path and index it; closes what it opened."""
    opened: list[SearchIndex] = []

    async def open_(lang: str) -> SearchIndex:
        root = tmp_path / lang
        shutil.copytree(shared_vault(lang), root)
        opened.append(await started(root, tmp_path / f"{lang}.sqlite3"))
        return opened[-1]

    yield open_
    for index in opened:
        await index.close()


def titles(index: SearchIndex, query: str, limit: int = 10) -> list[str]:
    return [hit.title for hit in index.search(query, limit).hits]


async def test_japanese_two_character_word(open_vault: Opener) -> None:
    """同期 (sync) finds the notes about syncing, a title with the word first."""
    index = await open_vault("ja")
    found = titles(index, "同期")
    assert "同期" in found[0]
    assert {"デバイス間でノートを同期する", "Sync設定と選択的同期"} <= set(found)


async def test_japanese_katakana_and_mixed_query(open_vault: Opener) -> None:
    """A katakana word and a Latin+CJK query find their notes."""
    index = await open_vault("ja")
    assert "コミュニティプラグイン" in titles(index, "コミュニティプラグイン")[:3]
    hits = index.search("Obsidian 同期").hits
    texts = [(index.root / hit.path).read_text(encoding="utf-8") for hit in hits]
    assert texts and all("同期" in text and "obsidian" in text.lower() for text in texts)


async def test_chinese_words(open_vault: Opener) -> None:
    """同步 (sync) and 同步笔记 find the Chinese sync notes, the exact title first."""
    index = await open_vault("zh")
    found = titles(index, "同步")
    assert "同步" in found[0] and len(found) == 10
    assert titles(index, "同步笔记")[0] == "同步笔记"
    assert any("**同步**" in hit.snippet for hit in index.search("同步").hits)


async def test_russian_words_in_any_case(open_vault: Opener) -> None:
    """Cyrillic words match whatever their case."""
    index = await open_vault("ru")
    assert "Синхронизация заметок между устройствами" in titles(index, "синхронизация заметок")
    assert titles(index, "СИНХРОНИЗАЦИЯ") == titles(index, "синхронизация")


async def test_german_words_with_and_without_umlauts(open_vault: Opener) -> None:
    """Umlauts fold: Rückverweise and ruckverweise find the same note first."""
    index = await open_vault("de")
    assert titles(index, "Rückverweise")[0] == "Rückverweise"
    assert titles(index, "ruckverweise")[0] == "Rückverweise"
    assert "Übersetzungen" in titles(index, "ubersetzungen")


async def test_english_syntax_on_a_real_vault(open_vault: Opener) -> None:
    """Phrase, prefix, path: and tag-free listings behave on real notes."""
    index = await open_vault("en")
    assert titles(index, '"command palette"')[0] == "Command palette"
    assert titles(index, "hotk*")[0] == "Hotkeys"
    assert all(h.path.startswith("Obsidian Sync/") for h in index.search("path:Sync/ sync").hits)
    assert index.note_count == len(list(index.root.rglob("*.md")))
