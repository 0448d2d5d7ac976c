"""The search index: ranking, syntax, CJK, incremental restarts, live updates, odd files."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugin_bridge.vault.index import SearchIndex
from plugin_bridge.vault.schema import MIGRATIONS, connect
from tests.conftest import shared_vault

NOTES = {
    "Kafka.md": "---\ntags: [infra, data/streams]\naliases: [Event log]\n---\n# Kafka\nA log.",
    "Reading/Books.md": "# Books\nI read about kafka in a chapter on logs.",
    "Projects/Plan.md": "# Plan\nShip it. #todo\nSee [[Kafka]] and [[Reading/Books|books]].",
    "Broken.md": "---\ntitle: [unclosed\n---\nThe body of a note with bad front matter: zebra.",
    "Café.md": "# Café\nLe crème brûlée est délicieux. Москва — столица.",
    "日本語.md": "# 日本語のノート\n東京で会議があります。",
}


def write_vault(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.fixture
async def index(tmp_path: Path) -> AsyncIterator[SearchIndex]:
    root = tmp_path / "vault"
    write_vault(root, NOTES)
    idx = SearchIndex(root, tmp_path / "data" / "index.sqlite3", debounce_ms=20)
    await idx.start()
    await idx.wait_until_idle(20)
    yield idx
    await idx.close()


def paths(idx: SearchIndex, query: str) -> list[str]:
    return [h.path for h in idx.search(query).hits]


async def until(check: Callable[[], bool], within: float = 5.0) -> float:
    """Poll ``check`` until true; return the seconds it took (fail after ``within``)."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > within:
            raise AssertionError(f"condition not met within {within} s")
        await asyncio.sleep(0.005)
    return time.monotonic() - started


async def test_title_match_ranks_above_body_match(index: SearchIndex) -> None:
    """BM25 weights the title over the body."""
    assert paths(index, "kafka")[:2] == ["Kafka.md", "Reading/Books.md"]


async def test_aliases_headings_prefix_and_phrases(index: SearchIndex) -> None:
    """Aliases and headings are searchable; prefix* and "phrases" work."""
    assert paths(index, '"event log"') == ["Kafka.md"]
    assert paths(index, "kaf*")[0] == "Kafka.md"
    assert paths(index, '"chapter on logs"') == ["Reading/Books.md"]
    assert paths(index, '"logs on chapter"') == []


async def test_tag_and_path_filters(index: SearchIndex) -> None:
    """tag: matches front matter, inline and nested tags; path: limits to a folder."""
    assert paths(index, "tag:infra") == ["Kafka.md"]
    assert paths(index, "tag:data") == ["Kafka.md"]
    assert paths(index, "tag:todo") == ["Projects/Plan.md"]
    assert paths(index, "kafka path:Reading") == ["Reading/Books.md"]
    assert paths(index, "path:Projects/") == ["Projects/Plan.md"]


async def test_snippets_highlight_the_match(index: SearchIndex) -> None:
    """Snippets wrap the matched words in **bold**."""
    hit = index.search("chapter").hits[0]
    assert "**chapter**" in hit.snippet and hit.score > 0


async def test_diacritics_cyrillic_and_japanese(index: SearchIndex) -> None:
    """Accents fold, Cyrillic words match, and Japanese text is found by any 2+ char piece."""
    assert paths(index, "creme brulee") == ["Café.md"]
    assert paths(index, "москва") == ["Café.md"]
    assert paths(index, "東京") == ["日本語.md"]
    assert paths(index, "会議があり") == ["日本語.md"]
    assert "**東京**" in index.search("東京").hits[0].snippet


async def test_malformed_front_matter_still_indexes_the_body(index: SearchIndex) -> None:
    """Bad YAML does not hide a note."""
    assert paths(index, "zebra") == ["Broken.md"]


async def test_backlinks_resolve_by_name_and_path(index: SearchIndex) -> None:
    """[[Kafka]] and [[Reading/Books|books]] both count as links."""
    assert index.backlinks("Kafka.md") == ["Projects/Plan.md"]
    assert index.backlinks("Reading/Books.md") == ["Projects/Plan.md"]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=60))
async def test_any_query_string_is_safe(index: SearchIndex, query: str) -> None:
    """Quotes, operators, emoji and control characters never raise."""
    result = index.search(query)
    assert isinstance(result.hits, list)


async def test_restart_processes_only_what_changed(tmp_path: Path) -> None:
    """A restart with nothing changed reads no file; edits, deletions and renames are found."""
    root, db = tmp_path / "vault", tmp_path / "index.sqlite3"
    write_vault(root, NOTES)
    first = SearchIndex(root, db, watch=False)
    await first.start()
    await first.wait_until_idle()
    assert first.last_scan_stats.added == len(NOTES)
    await first.close()

    second = SearchIndex(root, db, watch=False)
    await second.start()
    await second.wait_until_idle()
    stats = second.last_scan_stats
    assert (stats.added, stats.updated, stats.removed, stats.unchanged) == (0, 0, 0, len(NOTES))
    assert second.applied_migrations == []
    await second.close()

    (root / "Kafka.md").write_text("# Kafka\nnow about quokkas")
    (root / "Broken.md").unlink()
    (root / "Reading" / "Books.md").rename(root / "Reading" / "Library.md")
    third = SearchIndex(root, db, watch=False)
    await third.start()
    await third.wait_until_idle()
    stats = third.last_scan_stats
    assert (stats.added, stats.updated, stats.removed) == (1, 1, 2)
    assert paths(third, "quokkas") == ["Kafka.md"]
    assert paths(third, "zebra") == [] and paths(third, "chapter") == ["Reading/Library.md"]
    await third.close()


async def test_migrations_are_recorded_by_name(tmp_path: Path) -> None:
    """Each named migration runs once and is recorded."""
    (tmp_path / "v").mkdir()
    idx = SearchIndex(tmp_path / "v", tmp_path / "i.sqlite3", watch=False)
    await idx.start()
    assert idx.applied_migrations == [name for name, _ in MIGRATIONS]
    await idx.close()
    rows = connect(str(tmp_path / "i.sqlite3")).execute("SELECT name FROM migrations").fetchall()
    assert [r[0] for r in rows] == [name for name, _ in MIGRATIONS]


async def test_binary_huge_and_system_files_are_skipped(tmp_path: Path) -> None:
    """Binary, > 5 MB, .obsidian and temp files are never indexed, and nothing crashes."""
    root = tmp_path / "vault"
    write_vault(root, {"ok.md": "visible words", ".obsidian/x.md": "hidden words"})
    (root / "bin.md").write_bytes(b"\xff\xfe\x00binary words")
    (root / "huge.md").write_bytes(b"huge words " * 500_000)
    (root / ".~aib-123.tmp").write_text("temp words")
    idx = SearchIndex(root, tmp_path / "i.sqlite3", watch=False)
    await idx.start()
    await idx.wait_until_idle()
    assert paths(idx, "words") == ["ok.md"] and idx.note_count == 1
    await idx.close()


async def test_search_answers_while_indexing_and_reports_pending(tmp_path: Path) -> None:
    """During the first index, search returns partial results and a pending count."""
    root = tmp_path / "vault"
    write_vault(root, {f"n{i:04}.md": f"# Note {i}\ncommon word {i}" for i in range(3000)})
    idx = SearchIndex(root, tmp_path / "i.sqlite3", watch=False)
    await idx.start()
    await until(lambda: idx.pending > 0)
    partial = idx.search("common", 5)
    assert partial.pending > 0
    await idx.wait_until_idle(60)
    assert idx.search("common").pending == 0 and idx.note_count == 3000
    await idx.close()


async def test_live_changes_appear_in_search(index: SearchIndex) -> None:
    """Create, modify, rename and delete on disk show up without a restart."""
    root = index.root
    (root / "New.md").write_text("a fresh axolotl")
    await until(lambda: paths(index, "axolotl") == ["New.md"])
    (root / "New.md").write_text("now a narwhal")
    await until(lambda: paths(index, "narwhal") == ["New.md"] and not paths(index, "axolotl"))
    (root / "New.md").rename(root / "Moved.md")
    await until(lambda: paths(index, "narwhal") == ["Moved.md"])
    (root / "Moved.md").unlink()
    await until(lambda: paths(index, "narwhal") == [])


async def test_watcher_ignores_system_and_temp_files(index: SearchIndex) -> None:
    """Files in .obsidian and our temp files never reach the index."""
    (index.root / ".obsidian" / "w.md").parent.mkdir(exist_ok=True)
    (index.root / ".obsidian" / "w.md").write_text("walrus")
    (index.root / ".~aib-9.tmp").write_text("walrus")
    (index.root / "Marker.md").write_text("walrus marker")
    await until(lambda: paths(index, "walrus") == ["Marker.md"])


async def test_vanished_vault_keeps_results_and_recovers(index: SearchIndex) -> None:
    """Removing the vault folder keeps the last results; its return is picked up."""
    root = index.root
    backup = root.with_name("backup")
    shutil.move(root, backup)
    await until(lambda: index.vault_missing)
    assert paths(index, "kafka")[0] == "Kafka.md"
    (backup / "Returned.md").write_text("a returning ibis")
    shutil.move(backup, root)
    await until(lambda: paths(index, "ibis") == ["Returned.md"], within=10)
    assert not index.vault_missing


@pytest.mark.parametrize(
    ("lang", "query", "expected"), [("ja", "同期", "Obsidian Sync"), ("zh", "同步", "同步")]
)
async def test_cjk_queries_on_real_vaults(
    tmp_path: Path, lang: str, query: str, expected: str
) -> None:
    """Chinese and Japanese queries find the Obsidian help notes about sync."""
    root = tmp_path / lang
    shutil.copytree(shared_vault(lang), root)
    idx = SearchIndex(root, tmp_path / "i.sqlite3", watch=False)
    await idx.start()
    await idx.wait_until_idle(60)
    hits = idx.search(query, 10).hits
    assert len(hits) >= 3
    assert any(expected in h.path for h in hits)
    await idx.close()
