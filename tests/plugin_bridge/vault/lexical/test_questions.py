"""Questions people type: the words a question asks with are not what it looks for."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plugin_bridge.vault.lexical.index import SearchIndex
from tests.plugin_bridge.vault.lexical.test_index import started, write_vault

NOTES = {
    # the answer: what the question asks about, without its question word
    "Плагины/Обратные ссылки.md": (
        "# Обратные ссылки\nПанель показывает заметки, которые ссылаются на текущую заметку: "
        "так можно увидеть её связи."
    ),
    # a short note that holds the question word "какие" and most of the other words
    "Вкладки.md": "Какие заметки увидеть на текущую вкладку?",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def index(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SearchIndex]:
    root = tmp_path_factory.mktemp("questions")
    write_vault(root / "vault", NOTES)
    index = await started(root / "vault", root / "data" / "index.sqlite3")
    yield index
    await index.close()


def first(index: SearchIndex, query: str) -> str:
    return index.search(query, 10).hits[0].path


@pytest.mark.asyncio(loop_scope="module")
async def test_a_russian_question_word_is_not_searched_for(index: SearchIndex) -> None:
    """ "какие" ("which") is a form of "какой", a stop word: the note that answers holds every
    other word, a note that also says "какие" does not outrank it."""
    question = "Как увидеть, какие заметки ссылаются на текущую?"
    assert first(index, question) == "Плагины/Обратные ссылки.md"
