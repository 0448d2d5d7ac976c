"""The language guard: a query in one script does not get a note in another first from vector
noise (issue 41: "how do I make bread" ranked a Chinese note first with all-MiniLM-L6-v2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from llm_service.embedders import FakeEmbedder
from plugin_bridge.vault.semantic.scripts import same_script_first, script_of
from plugin_bridge.vault.vault import Vault

NOTES = {
    "Kitchen/Soup.md": "# Soup\nSimmer the onions, add stock and season to taste.",
    "Kitchen/Knives.md": "# Knives\nSharpen the blade on a whetstone at a low angle.",
    "中文/花园.md": "# 花园\n番茄需要每天浇水，夏天更要注意。",
    "日本語/天気.md": "# 天気\n東京の天気は明日雨です。傘を持っていきましょう。",
}
BREAD = "how do I make bread"


class ScriptBlindEmbedder(FakeEmbedder):
    """Maps every text with Chinese or Japanese characters, and the bread question, to one
    point, as a model that does not know those scripts maps them near a short query."""

    def vector(self, text: str) -> Any:
        if BREAD in text or script_of(text) == "cjk":
            point = np.zeros(self.dims or 128, dtype=np.float32)
            point[0] = 1.0
            return point
        return super().vector(text)


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("how do I make bread", "latin"),
        ("Übersicht über die Größe", "latin"),
        ("Как сделать таблицу в Obsidian", "cyrillic"),
        ("如何创建表格", "cjk"),
        ("見出しを折りたたむには？", "cjk"),
        ("2024 — 42", None),
    ],
)
def test_the_script_of_a_text_is_that_of_most_of_its_letters(text: str, script: str) -> None:
    assert script_of(text) == script


def test_notes_in_the_query_script_come_first_in_the_vectors_order() -> None:
    """Order within each group is kept; a note whose words matched stays where it was; a note
    a fifth or more in the query's script counts as in it; a query without letters changes
    nothing."""
    notes = {"zh.md": 1, "en1.md": 2, "ru.md": 3, "en2.md": 4}
    texts = [
        "这是一篇中文笔记，讲的是怎样在几台设备之间同步笔记，也提到 Sync",
        "an English note",
        "русская заметка",
        "another note",
    ]
    assert list(same_script_first("bread", notes, texts)) == ["en1.md", "en2.md", "zh.md", "ru.md"]
    glossary = ["面包（miànbāo）— bread；跑步（pǎobù）— running", *texts[1:]]
    assert next(iter(same_script_first("学习中文的方法", notes, glossary))) == "zh.md"
    kept = same_script_first("bread", notes, texts, frozenset({"zh.md"}))
    assert list(kept) == ["zh.md", "en1.md", "en2.md", "ru.md"]
    assert list(same_script_first("2024", notes, texts)) == list(notes)


async def test_an_english_question_does_not_get_a_chinese_note_first(tmp_path: Path) -> None:
    """Whatever the vectors say, semantic and hybrid search put the notes in the question's
    script first; a Chinese question still gets its Chinese note first."""
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    vault = Vault(root, tmp_path / "data", watch=False)
    semantic = vault.use_embedder(ScriptBlindEmbedder())
    async with vault:
        await vault.index.wait_until_idle(20)
        await semantic.wait_until_idle(20)
        for mode in ("semantic", "hybrid"):
            found = await vault.search(BREAD, 4, mode=mode)  # type: ignore[arg-type]
            assert found.mode == mode
            paths = [hit.path for hit in found.hits]
            assert paths[0].startswith("Kitchen/"), paths
            assert set(paths[2:]) == {"中文/花园.md", "日本語/天気.md"}
            chinese = await vault.search("番茄浇水", 2, mode=mode)  # type: ignore[arg-type]
            assert chinese.hits[0].path == "中文/花园.md"
