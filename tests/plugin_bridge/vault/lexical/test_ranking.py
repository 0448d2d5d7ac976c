"""Ranked word search on small vaults: any word matches, all words rank first, stop words,
stems in English, German and Russian, typos, exact phrases, required words, matches in many
notes ranked by their fields first, and an index from before stems upgraded on start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from plugin_bridge.vault.lexical import search
from plugin_bridge.vault.lexical.index import SearchIndex
from plugin_bridge.vault.schema import MIGRATIONS, connect
from tests.plugin_bridge.vault.lexical.test_index import started, write_vault

NOTES = {
    # one word, in the title and many times: a high BM25 for "image" alone
    "Image.md": "# Image\nImage image image. An image is a picture.",
    # every word of "embed image note", once each, in the body
    "Howto.md": "To embed an image in a note, type an exclamation mark before the link.",
    "Runner.md": "She runs every morning and has run two marathons.",
    "Jogging.md": "Running is good for you.",
    "Tasks.md": "A list of tasks for the week.",
    "Task list.md": "- [ ] write the task list syntax down",
    "Sync.md": "Sync keeps your vault the same on every device.",
    "Backlinks.md": "The backlinks pane shows the notes that link here.",
    "The Who.md": "A band. Who are they? The who.",
    "de/Einstellung.md": "Die Einstellung für die Sprache ist in den Optionen.",
    "de/Notizen.md": "Wir schreiben Notizen und verschieben sie in Ordner.",
    "ru/Заметки.md": "Заметки можно синхронизировать между устройствами.",
    "ru/Другое.md": "Синхронизация заметок выполняется автоматически.",
    "日本語.md": "# 同期\n東京で同期の設定をします。",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def index(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SearchIndex]:
    root = tmp_path_factory.mktemp("ranking")
    write_vault(root / "vault", NOTES)
    index = await started(root / "vault", root / "data" / "index.sqlite3")
    yield index
    await index.close()


def paths(index: SearchIndex, query: str, limit: int = 10) -> list[str]:
    return [hit.path for hit in index.search(query, limit).hits]


@pytest.mark.asyncio(loop_scope="module")
async def test_notes_with_every_word_rank_above_notes_with_some(index: SearchIndex) -> None:
    """Any word finds a note; the one with all of them comes first even though another note
    has one of them in its title many times; scores fall down the list."""
    hits = index.search("embed image note").hits
    assert [h.path for h in hits][:2] == ["Howto.md", "Image.md"]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert paths(index, "image")[0] == "Image.md"  # alone, the title wins as before


@pytest.mark.asyncio(loop_scope="module")
async def test_a_question_finds_its_note_without_its_stop_words(index: SearchIndex) -> None:
    """ "How do I …?" needs no note to say "how", "do" or "I"."""
    assert paths(index, "How do I embed an image in a note?")[0] == "Howto.md"


@pytest.mark.asyncio(loop_scope="module")
async def test_stop_words_alone_still_find(index: SearchIndex) -> None:
    assert paths(index, "the who")[0] == "The Who.md"


@pytest.mark.asyncio(loop_scope="module")
async def test_a_stemmed_form_finds_the_other_and_the_exact_word_ranks_first(
    index: SearchIndex,
) -> None:
    assert paths(index, "running") == ["Jogging.md", "Runner.md"]
    assert paths(index, "runs") == ["Runner.md", "Jogging.md"]
    assert sorted(paths(index, "run")) == ["Jogging.md", "Runner.md"]


@pytest.mark.asyncio(loop_scope="module")
async def test_german_and_russian_words_are_stemmed(index: SearchIndex) -> None:
    assert paths(index, "Einstellungen") == ["de/Einstellung.md"]
    assert paths(index, "notiz") == ["de/Notizen.md"]
    assert paths(index, "заметка") == ["ru/Заметки.md"]  # заметки; "заметок" stems apart
    assert paths(index, "устройство") == ["ru/Заметки.md"]  # устройствами
    assert paths(index, "синхронизация") == ["ru/Другое.md"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_one_letter_typo_finds_the_word(index: SearchIndex) -> None:
    assert paths(index, "backlnks") == ["Backlinks.md"]  # a letter missing
    assert paths(index, "bcaklinks") == ["Backlinks.md"]  # two letters swapped
    assert paths(index, "snyc vualt")[0] == "Sync.md"
    assert paths(index, "zqxjv") == []  # nothing near it: nothing found


@pytest.mark.asyncio(loop_scope="module")
async def test_phrases_stay_exact(index: SearchIndex) -> None:
    """A phrase needs its words in order, unstemmed; the words alone find both notes."""
    assert paths(index, '"task list"') == ["Task list.md"]
    assert paths(index, '"list of task"') == []
    assert sorted(paths(index, "task list")) == ["Task list.md", "Tasks.md"]


@pytest.mark.asyncio(loop_scope="module")
async def test_plus_makes_a_word_required(index: SearchIndex) -> None:
    assert "Image.md" in paths(index, "embed image")
    assert paths(index, "embed +image +note") == ["Howto.md"]
    assert paths(index, "+image picture")[0] == "Image.md"
    assert "Howto.md" in paths(index, "+image picture")


@pytest.mark.asyncio(loop_scope="module")
async def test_cjk_searches_are_unchanged(index: SearchIndex) -> None:
    """CJK runs still go to the bigram table and are required with Latin words."""
    assert paths(index, "同期") == ["日本語.md"]
    assert paths(index, "東京") == ["日本語.md"]
    assert paths(index, "同期 sync") == []  # no note has both


async def test_an_index_from_before_stems_is_rebuilt_on_start(tmp_path: Path) -> None:
    """A database at migration 005 gets the stem columns and the CJK title column and re-reads
    every note: stemmed search, typos and CJK work after the start, with nothing asked of the
    user."""
    root, db = tmp_path / "vault", tmp_path / "i.sqlite3"
    write_vault(root, NOTES)
    old = connect(str(db))
    old.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    before = [m for m in MIGRATIONS if m[0] < "006"]
    for name, sql in before:
        old.executescript(sql)
        old.execute("INSERT INTO migrations VALUES (?, 'then')", (name,))
    old.close()
    first = await started(root, db)
    await first.close()
    index = await started(root, db)  # the stale index of the old schema is gone for good
    assert index.applied_migrations == []
    assert paths(index, "Einstellungen") == ["de/Einstellung.md"]
    assert paths(index, "backlnks") == ["Backlinks.md"]
    assert paths(index, "同期") == ["日本語.md"]
    await index.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_cjk_question_finds_notes_with_its_bigrams(index: SearchIndex) -> None:
    """A question in Japanese is one run no note holds whole: notes with some of its bigrams
    follow the exact matches (here there are none), scored below them."""
    assert paths(index, "同期の設定を変更する方法") == ["日本語.md"]
    assert paths(index, "設定") == ["日本語.md"]
    hits = index.search("東京で同期").hits
    assert hits[0].path == "日本語.md" and hits[0].score > 1  # found whole: the top tier


FILLER = " ".join(f"filler{i}" for i in range(300))
CROWD = {
    # the word in the title only, in a long note: a lower BM25 than notes saying it many times
    "Sync.md": f"# Sync\n{FILLER}",
    "Sync setup.md": f"# Sync setup\n{FILLER}",
    **{f"Log {i}.md": "sync " * 40 for i in range(4)},
    "同期.md": f"# 同期\n{FILLER}",
    **{f"記録 {i}.md": "同期。" * 40 for i in range(4)},
}


async def test_a_word_in_many_notes_ranks_the_notes_with_it_in_their_title_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past FIELDS_FIRST matches (5,000; 3 here), the notes with the word in their title rank
    first when they fill the page; when they do not, every match is ranked by BM25, as below
    the threshold."""
    write_vault(tmp_path / "vault", CROWD)
    index = await started(tmp_path / "vault", tmp_path / "i.sqlite3")
    exact = paths(index, "sync", 2)
    assert all(path.startswith("Log") for path in exact)  # BM25: the notes saying it 40 times
    monkeypatch.setattr(search, "FIELDS_FIRST", 3)
    assert sorted(paths(index, "sync", 2)) == ["Sync setup.md", "Sync.md"]
    assert paths(index, "sync", 3)[0].startswith("Log")  # two titles do not fill 3 places
    assert paths(index, "同期", 1) == ["同期.md"]
    assert len(paths(index, "同期", 5)) == 5
    await index.close()
