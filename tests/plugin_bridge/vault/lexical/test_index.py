"""SearchIndex on small generated vaults: ranking, syntax, languages, odd files, restarts."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugin_bridge.vault.files import MAX_NOTE_BYTES, VaultFiles
from plugin_bridge.vault.lexical import worker as worker_module
from plugin_bridge.vault.lexical.index import SearchIndex
from plugin_bridge.vault.lexical.indexer import Indexer, IndexOutcome, Prepared
from plugin_bridge.vault.lexical.worker import BATCH
from plugin_bridge.vault.schema import MIGRATIONS, connect, migrate

NOTES = {
    "Kafka.md": "---\ntags: [infra, data/streams]\naliases: [Event log]\n---\n# Kafka\nA log.",
    "Reading/Books.md": "# Books\nI read about kafka in a chapter on logs.\n## Streaming systems",
    "Projects/Plan.md": "# Plan\nShip it. #todo\nSee [[Kafka]] and [[Reading/Books|books]].",
    "Broken.md": "---\ntitle: [unclosed\n---\nThe body of a note with bad front matter: zebra.",
    "Café.md": "# Café\nLe crème brûlée est délicieux. Москва — столица. Straße und Grüße.",
    "日本語.md": "# 日本語のノート\n東京で会議があります。",
    "中文/笔记.md": "我们今天同步了所有的笔记。",
    "한국어.md": "서울에서 회의가 있습니다.",
}


def write_vault(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def paths(index: SearchIndex, query: str, limit: int = 10) -> list[str]:
    return [hit.path for hit in index.search(query, limit).hits]


async def until(check: Callable[[], bool], within: float = 5.0) -> None:
    """Poll ``check`` until it holds; fail after ``within`` seconds."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within} s")
        await asyncio.sleep(0.005)


async def started(root: Path, db: Path, **options: bool) -> SearchIndex:
    """An index on ``root`` that has finished its start-up scan (no watcher unless asked)."""
    index = SearchIndex(root, db, watch=options.pop("watch", False), debounce_ms=20)
    await index.start()
    await index.wait_until_idle(20)
    return index


@pytest.fixture
async def index(tmp_path: Path) -> AsyncIterator[SearchIndex]:
    write_vault(tmp_path / "vault", NOTES)
    index = await started(tmp_path / "vault", tmp_path / "data" / "index.sqlite3")
    yield index
    await index.close()


async def test_title_match_ranks_above_body_match(index: SearchIndex) -> None:
    """BM25 weights the title above the body: the note named Kafka comes first."""
    found = paths(index, "kafka")
    assert found[0] == "Kafka.md"
    assert sorted(found[1:]) == ["Projects/Plan.md", "Reading/Books.md"]


async def test_aliases_and_headings_are_weighted_fields(index: SearchIndex) -> None:
    """Aliases and headings are searchable and outrank a body mention."""
    assert paths(index, '"event log"') == ["Kafka.md"]
    assert paths(index, "streaming")[0] == "Reading/Books.md"  # Kafka's tag data/streams next


async def test_prefix_and_phrase_queries(index: SearchIndex) -> None:
    """``kaf*`` matches by prefix; a phrase needs its words in order."""
    assert paths(index, "kaf*")[0] == "Kafka.md"
    assert paths(index, '"chapter on logs"') == ["Reading/Books.md"]
    assert paths(index, '"logs on chapter"') == []


async def test_snippets_highlight_the_match(index: SearchIndex) -> None:
    """Snippets wrap matched words in ** and scores are positive, best first."""
    hits = index.search("chapter kafka").hits
    assert "**chapter**" in hits[0].snippet and "**kafka**" in hits[0].snippet
    ranked = index.search("kafka").hits
    assert all(hit.score > 0 for hit in ranked)
    assert [hit.score for hit in ranked] == sorted((hit.score for hit in ranked), reverse=True)


async def test_tag_filter_matches_nested_and_inline_tags(index: SearchIndex) -> None:
    """tag:x matches x and x/… from front matter or the text, never a tag that merely starts
    with x."""
    assert paths(index, "tag:infra") == ["Kafka.md"]
    assert paths(index, "tag:DATA") == ["Kafka.md"]
    assert paths(index, "tag:data/streams") == ["Kafka.md"]
    assert paths(index, "tag:#todo") == ["Projects/Plan.md"]
    assert paths(index, "tag:dat") == []


async def test_path_filter_combines_with_words(index: SearchIndex) -> None:
    """path: keeps notes whose path contains the text (any case), alone or with words."""
    assert paths(index, "kafka path:reading") == ["Reading/Books.md"]
    assert paths(index, "path:Projects/") == ["Projects/Plan.md"]
    assert paths(index, "path:中文") == ["中文/笔记.md"]


async def test_a_query_of_filters_lists_notes_by_path(index: SearchIndex) -> None:
    """Filters alone list the matching notes in path order, with the start of their text."""
    hits = index.search("path:.md tag:infra").hits
    assert [(h.path, h.title, h.score) for h in hits] == [("Kafka.md", "Kafka", 0.0)]
    assert hits[0].snippet.startswith("# Kafka A log.")
    assert len(paths(index, "path:.md", limit=3)) == 3


async def test_words_with_diacritics_in_any_script(index: SearchIndex) -> None:
    """Accents fold both ways; Cyrillic and German words match in any case."""
    assert paths(index, "creme brulee") == ["Café.md"]
    assert paths(index, "crème") == ["Café.md"]
    assert paths(index, "МОСКВА") == ["Café.md"]
    assert paths(index, "grüße") == ["Café.md"]
    assert paths(index, "strasse") == []  # no ß→ss folding in unicode61: documented


async def test_cjk_words_of_any_length(index: SearchIndex) -> None:
    """Japanese, Chinese and Korean words of one, two or more characters are found."""
    assert paths(index, "東京") == ["日本語.md"]
    assert paths(index, "会議があり") == ["日本語.md"]
    assert paths(index, "京") == ["日本語.md"]
    assert paths(index, "同步") == ["中文/笔记.md"]
    assert paths(index, "서울") == ["한국어.md"]
    assert paths(index, "東京 会議") == ["日本語.md"]
    assert paths(index, "東京 同步") == []
    assert paths(index, "京会") == []  # not adjacent in the text


async def test_cjk_snippet_and_title_bonus(tmp_path: Path) -> None:
    """A CJK hit's snippet marks the term; a note with the term in its title ranks first."""
    write_vault(tmp_path / "v", {"会議.md": "メモ。会議", "メモ.md": "会議 会議 会議 会議"})
    index = await started(tmp_path / "v", tmp_path / "i.sqlite3")
    hits = index.search("会議").hits
    assert [h.path for h in hits] == ["会議.md", "メモ.md"]
    assert "**会議**" in hits[0].snippet
    await index.close()


async def test_latin_and_cjk_words_together(index: SearchIndex) -> None:
    """Latin words and CJK words in one query must all match the same note."""
    write_note = NOTES["日本語.md"] + " Kafka meetup"
    (index.root / "日本語.md").write_text(write_note, encoding="utf-8")
    await asyncio.to_thread(index.notify_changed, "日本語.md")
    hits = index.search("kafka 東京").hits
    assert [h.path for h in hits] == ["日本語.md"]
    assert "**Kafka**" in hits[0].snippet


async def test_malformed_front_matter_is_still_indexed(index: SearchIndex) -> None:
    """A note whose YAML is broken is searchable by its text and file-name title."""
    assert paths(index, "zebra") == ["Broken.md"]
    assert index.search("zebra").hits[0].title == "Broken"


async def test_hostile_queries_answer_quietly(
    index: SearchIndex, caplog: pytest.LogCaptureFixture
) -> None:
    """SQL-ish, FTS-ish and binary input returns results or none, never an SQLite error."""
    queries = ['"', "AND", "-", "*", "(kafka", "kafka)", "NEAR(", "'; DROP TABLE notes; --"]
    queries += ["\x00", "\ud800", "🙂🙂", "tag:", 'path:"', "%", "_" * 500, "a" * 5000]
    with caplog.at_level(logging.WARNING):
        for query in queries:
            assert isinstance(index.search(query).hits, list)
    assert not caplog.records
    assert index.note_count == len(NOTES)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=60))
async def test_any_query_string_is_safe(index: SearchIndex, query: str) -> None:
    """Quotes, operators, emoji and control characters never raise."""
    assert isinstance(index.search(query).hits, list)


async def test_limit_is_clamped(index: SearchIndex) -> None:
    """A zero or negative limit returns nothing; a huge one is capped."""
    assert paths(index, "kafka", limit=0) == []
    assert paths(index, "kafka", limit=-5) == []
    assert len(paths(index, "path:.md", limit=10**9)) == len(NOTES)


async def test_binary_and_huge_files_are_skipped_once(tmp_path: Path) -> None:
    """Binary and > 5 MB files are skipped, counted, and not read again; a note with a stray
    non-UTF-8 byte is indexed with that byte as U+FFFD."""
    root = tmp_path / "vault"
    write_vault(root, {"ok.md": "visible words"})
    (root / "nul.md").write_bytes(b"words\x00\x01\x02")
    (root / "latin1.md").write_bytes("caf\xe9 words".encode("latin-1"))
    (root / "huge.md").write_bytes(b"words " * (MAX_NOTE_BYTES // 6 + 1))
    (root / "image.png").write_bytes(b"\x89PNG words")
    first = await started(root, tmp_path / "i.sqlite3")
    assert sorted(paths(first, "words")) == ["latin1.md", "ok.md"]
    assert first.last_scan_stats.skipped == 2 and first.note_count == 2
    await first.close()
    second = await started(root, tmp_path / "i.sqlite3")
    stats = second.last_scan_stats
    assert (stats.added, stats.updated, stats.skipped, stats.unchanged) == (0, 0, 0, 4)
    await second.close()


async def test_restart_processes_only_what_changed(tmp_path: Path) -> None:
    """A restart reads no unchanged file; edits, touches, deletions and renames are found."""
    root, db = tmp_path / "vault", tmp_path / "index.sqlite3"
    write_vault(root, NOTES)
    first = await started(root, db)
    assert first.last_scan_stats.added == len(NOTES)
    await first.close()

    second = await started(root, db)
    stats = second.last_scan_stats
    assert (stats.added, stats.updated, stats.removed, stats.unchanged) == (0, 0, 0, len(NOTES))
    assert second.applied_migrations == []
    await second.close()

    (root / "Kafka.md").write_text("# Kafka\nnow about quokkas")
    (root / "Broken.md").unlink()
    (root / "Reading" / "Books.md").rename(root / "Reading" / "Library.md")
    (root / "Café.md").write_text(NOTES["Café.md"], encoding="utf-8")  # same bytes, new mtime
    third = await started(root, db)
    stats = third.last_scan_stats
    assert (stats.added, stats.updated, stats.removed) == (1, 1, 2)
    assert stats.unchanged == len(NOTES) - 3
    assert paths(third, "quokkas") == ["Kafka.md"] and paths(third, "zebra") == []
    assert paths(third, "chapter") == ["Reading/Library.md"]
    assert "Reading/Books.md" not in third.list_paths()
    await third.close()


async def test_search_answers_while_the_first_index_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """During the first index, search returns what is indexed so far and a pending count, and
    progress says done of total files (counting up to the vault's size, never past it)."""
    root = tmp_path / "vault"
    write_vault(root, {f"n{i:04}.md": f"# Note {i}\ncommon word {i}" for i in range(BATCH + 10)})
    first_batch_written = threading.Event()
    resume = threading.Event()
    real_write = Indexer.write

    def paused_write(self: Indexer, items: Sequence[Prepared]) -> list[IndexOutcome]:
        if first_batch_written.is_set():
            resume.wait(10)
        outcomes = real_write(self, items)
        first_batch_written.set()
        return outcomes

    monkeypatch.setattr(Indexer, "write", paused_write)
    index = SearchIndex(root, tmp_path / "i.sqlite3", watch=False)
    await index.start()
    assert await asyncio.to_thread(first_batch_written.wait, 10)
    await until(lambda: index.pending == 10)  # the first batch is counted once it returns
    partial = index.search("common", 5)
    assert len(partial.hits) == 5 and partial.pending == 10
    assert index.note_count == BATCH
    assert index.progress == (BATCH, BATCH + 10)
    resume.set()
    await index.wait_until_idle(20)
    assert index.search("common").pending == 0 and index.note_count == BATCH + 10
    assert index.progress == (0, 0)
    await index.close()


async def test_migrations_run_once_and_are_recorded_by_name(tmp_path: Path) -> None:
    """Each named migration runs once, in order, and is recorded in the migrations table."""
    (tmp_path / "v").mkdir()
    db = tmp_path / "i.sqlite3"
    first = await started(tmp_path / "v", db)
    assert first.applied_migrations == [name for name, _ in MIGRATIONS]
    await first.close()
    second = await started(tmp_path / "v", db)
    assert second.applied_migrations == []
    await second.close()
    conn = connect(str(db))
    rows = conn.execute("SELECT name FROM migrations ORDER BY rowid").fetchall()
    conn.close()
    assert [row[0] for row in rows] == [name for name, _ in MIGRATIONS]


async def test_full_text_tables_flush_a_batch_at_once(tmp_path: Path) -> None:
    """Both full-text tables keep up to 16 MB of a transaction's rows in memory (FTS5's default
    is 1 MB), so a batch of notes is written as one segment, not a dozen to merge later."""
    (tmp_path / "v").mkdir()
    db = tmp_path / "i.sqlite3"
    index = await started(tmp_path / "v", db)
    await index.close()
    conn = connect(str(db))
    sizes = [
        conn.execute(f"SELECT v FROM {table}_config WHERE k = 'hashsize'").fetchone()
        for table in ("notes_fts", "notes_cjk")
    ]
    conn.close()
    assert sizes == [(16 * 1024 * 1024,), (16 * 1024 * 1024,)]


async def test_a_database_from_the_first_schema_is_upgraded(tmp_path: Path) -> None:
    """A database made by the first migration alone gets the rest and re-reads every note."""
    root, db = tmp_path / "vault", tmp_path / "i.sqlite3"
    write_vault(root, NOTES)
    old = connect(str(db))
    old.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    name, sql = MIGRATIONS[0]
    old.executescript(sql)
    old.execute("INSERT INTO migrations VALUES (?, 'then')", (name,))
    old.close()
    index = await started(root, db)
    assert index.applied_migrations == [name for name, _ in MIGRATIONS[1:]]
    assert index.last_scan_stats.added == len(NOTES)
    assert paths(index, "同步") == ["中文/笔记.md"]
    await index.close()


async def test_an_unreadable_database_is_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A corrupt index file is replaced (it is only a cache) with a warning."""
    root, db = tmp_path / "vault", tmp_path / "i.sqlite3"
    write_vault(root, {"a.md": "alpaca"})
    db.write_bytes(b"this is not an SQLite database" * 100)
    with caplog.at_level(logging.WARNING, logger="plugin_bridge.vault.lexical.index"):
        index = await started(root, db)
    assert paths(index, "alpaca") == ["a.md"]
    assert any("rebuilding" in record.getMessage() for record in caplog.records)
    await index.close()


async def test_backlinks_follow_obsidian_link_resolution(tmp_path: Path) -> None:
    """[[Name]] links a note by file name, [[folder/Name]] by (partial) path; case-insensitive;
    a link to a same-named note in another folder does not count."""
    write_vault(
        tmp_path / "v",
        {
            "Areas/Kafka.md": "kafka",
            "Other/Kafka.md": "another kafka",
            "by-name.md": "[[kafka]]",
            "by-path.md": "[[Areas/Kafka#Setup|setup]]",
            "by-partial.md": "![[areas/KAFKA.md]]",
            "elsewhere.md": "[[Other/Kafka]]",
            "Areas/self.md": "[[self]]",
        },
    )
    index = await started(tmp_path / "v", tmp_path / "i.sqlite3")
    assert index.backlinks("Areas/Kafka.md") == ["by-name.md", "by-partial.md", "by-path.md"]
    assert index.backlinks("Other/Kafka.md") == ["by-name.md", "elsewhere.md"]
    assert index.backlinks("Areas/self.md") == []
    assert index.backlinks("Nowhere.md") == []
    await index.close()


async def test_notify_changed_indexes_and_drops_at_once(index: SearchIndex) -> None:
    """After our own write, notify_changed makes the note searchable before it returns."""
    (index.root / "New.md").write_text("a fresh axolotl")
    await asyncio.to_thread(index.notify_changed, "New.md")
    assert paths(index, "axolotl") == ["New.md"]
    (index.root / "New.md").unlink()
    await asyncio.to_thread(index.notify_changed, "New.md")
    assert paths(index, "axolotl") == []


async def test_notify_changed_is_a_no_op_when_not_running(tmp_path: Path) -> None:
    """Before start and after close, notify_changed returns at once."""
    index = SearchIndex(tmp_path, tmp_path / "i.sqlite3", watch=False)
    index.notify_changed("a.md")
    await index.start()
    await index.close()
    await index.close()  # idempotent
    index.notify_changed("a.md")


async def test_search_before_start_says_what_to_do(tmp_path: Path) -> None:
    """Using the index before start() raises a clear error."""
    with pytest.raises(RuntimeError, match="start"):
        SearchIndex(tmp_path, tmp_path / "i.sqlite3").search("x")


async def test_hidden_system_temp_and_excluded_files_are_not_indexed(tmp_path: Path) -> None:
    """.obsidian, .git, hidden folders, temp files and the excluded data folder are skipped."""
    root = tmp_path / "vault"
    write_vault(
        root,
        {
            "ok.md": "walrus",
            ".obsidian/x.md": "walrus",
            ".git/y.md": "walrus",
            ".hidden/z.md": "walrus",
            ".~aib-1234.md": "walrus",
            "draft.md~": "walrus",
            "data/inside.md": "walrus",
        },
    )
    index = SearchIndex(
        root, root / "data" / "index.sqlite3", watch=False, excluded=frozenset({root / "data"})
    )
    await index.start()
    await index.wait_until_idle(20)
    assert index.list_paths() == ["ok.md"]
    assert index.files.ignored("data/inside.md") and not index.files.ignored("database.md")
    await index.close()


async def test_a_file_gone_before_it_is_read_counts_as_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file listed by the scan but gone when read is treated as deleted, without error."""
    write_vault(tmp_path / "v", {"a.md": "alpha"})
    real_walk = VaultFiles.walk
    ghost = os.stat_result((0o100644, 0, 0, 1, 0, 0, 5, 1, 1, 1))

    def walk_with_ghost(
        self: VaultFiles, folder: str = "", *, pdfs: bool = False
    ) -> Iterator[tuple[str, os.stat_result]]:
        yield from real_walk(self, folder, pdfs=pdfs)
        yield "ghost.md", ghost

    monkeypatch.setattr(VaultFiles, "walk", walk_with_ghost)
    index = await started(tmp_path / "v", tmp_path / "i.sqlite3")
    assert index.list_paths() == ["a.md"] and index.last_scan_stats.added == 1
    await index.close()


async def test_a_missing_vault_at_start_keeps_the_index(tmp_path: Path) -> None:
    """If the vault folder is gone at start, the last indexed state stays searchable."""
    root, db = tmp_path / "vault", tmp_path / "i.sqlite3"
    write_vault(root, {"a.md": "alpaca"})
    await (await started(root, db)).close()
    root.rename(tmp_path / "elsewhere")
    index = await started(root, db)
    assert index.vault_missing and paths(index, "alpaca") == ["a.md"]
    await index.close()


def test_migrate_rolls_back_a_failing_migration() -> None:
    """A migration that fails leaves no half-applied schema and is not recorded."""
    bad = (*MIGRATIONS, ("999_broken", "CREATE TABLE t (x); INSERT INTO nowhere VALUES (1)"))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, bad)
    names = [row[0] for row in conn.execute("SELECT name FROM migrations")]
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE name = 't'")]
    assert names == [name for name, _ in MIGRATIONS] and tables == []


def _fts_pages(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM notes_fts_data").fetchone()[0])
    finally:
        conn.close()


async def test_a_scan_that_rewrote_many_notes_leaves_the_full_text_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each scan that rewrites notes leaves the full-text table another segment and the rows it
    replaced; after one that wrote MERGE_AFTER notes or more (1 here) the worker merges them,
    a bounded step at a time, and search still finds the notes."""
    root, db = tmp_path / "vault", tmp_path / "index.sqlite3"

    async def rewrite_and_scan(round_: int) -> SearchIndex:
        write_vault(root, {f"n{i}.md": f"round{round_} word{i} common" for i in range(40)})
        return await started(root, db)

    monkeypatch.setattr(worker_module, "MERGE_AFTER", 10**9)
    for round_ in range(6):
        await (await rewrite_and_scan(round_)).close()
    left = _fts_pages(db)
    monkeypatch.setattr(worker_module, "MERGE_AFTER", 1)
    index = await rewrite_and_scan(6)
    await until(lambda: _fts_pages(db) < left, within=10)
    assert paths(index, "round6 word7")[0] == "n7.md"
    assert paths(index, '"round5"') == []  # the replaced rows are gone
    await index.close()
