"""PDFs in the vault over a real socket: searched by page (English, German, Chinese), read by
page with note/read and the read_note tool, unreadable ones skipped with one log line and
counted, and a changed PDF re-embedding only its changed pages."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from llm_service.embedders import FakeEmbedder
from llm_service.embedders.base import Batch
from tests.helpers.bridge import running_bridge, wait_for
from tests.helpers.pdfs import cjk_font, make_pdf

EN_PAGE_2 = "The lighthouse keeper counted seventeen herons at dawn."
DE_PAGE_2 = "Die Bäckerei öffnet sonntags erst um zehn Uhr."
ZH_PAGE_2 = "我们在图书馆旁边吃了北京烤鸭。"


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Papers").mkdir(parents=True)
    (root / "Note.md").write_text("# Note\n\nA plain note about gardening.\n", encoding="utf-8")
    (root / "Papers" / "english.pdf").write_bytes(
        make_pdf(["An introduction to coastal birds.", EN_PAGE_2])
    )
    (root / "Papers" / "deutsch.pdf").write_bytes(
        make_pdf(["Ein Bericht über das Dorf.", DE_PAGE_2])
    )
    (root / "Papers" / "locked.pdf").write_bytes(make_pdf(["secret"], password="pw"))
    (root / "Papers" / "broken.pdf").write_bytes(b"%PDF-1.7\nthis is not a PDF at all\n")
    return root


async def test_a_phrase_on_page_two_is_found_with_its_page(tmp_path: Path) -> None:
    async with running_bridge(tmp_path, vault_root=_vault(tmp_path)) as bridge:
        wire = await bridge.wire()
        found = await wire.result("vault/search", {"query": '"seventeen herons"'})
        [hit] = found["results"]
        assert hit["path"] == "Papers/english.pdf" and hit["page"] == 2
        assert hit["heading"] is None  # a PDF's place is its page
        assert "**seventeen herons**" in hit["snippet"] and "coastal" not in hit["snippet"]
        german = (await wire.result("vault/search", {"query": "Bäckerei sonntags"}))["results"]
        assert [(h["path"], h["page"]) for h in german] == [("Papers/deutsch.pdf", 2)]
        note = (await wire.result("vault/search", {"query": "gardening"}))["results"]
        assert note[0]["path"] == "Note.md" and note[0]["page"] is None


async def test_chinese_pdf_page_two(tmp_path: Path) -> None:
    font = cjk_font()
    if font is None:
        pytest.skip("no CJK font on this machine (Debian: apt-get install fonts-wqy-microhei)")
    root = _vault(tmp_path)
    pages = ["第一页讲的是天气。", ZH_PAGE_2]
    (root / "Papers" / "中文.pdf").write_bytes(make_pdf(pages, font=font))
    async with running_bridge(tmp_path, vault_root=root) as bridge:
        wire = await bridge.wire()
        [hit] = (await wire.result("vault/search", {"query": "烤鸭"}))["results"]
        assert hit["path"] == "Papers/中文.pdf" and hit["page"] == 2
        assert "**烤鸭**" in hit["snippet"]


async def test_note_read_of_a_pdf_by_pages(tmp_path: Path) -> None:
    async with running_bridge(tmp_path, vault_root=_vault(tmp_path)) as bridge:
        wire = await bridge.wire()
        whole = await wire.result("note/read", {"path": "Papers/english.pdf"})
        assert whole["pageCount"] == 2
        assert whole["content"].startswith("--- page 1 of 2 ---\nAn introduction")
        assert f"--- page 2 of 2 ---\n{EN_PAGE_2}" in whole["content"]
        second = await wire.result("note/read", {"path": "Papers/english.pdf", "pages": "2"})
        assert second["content"] == f"--- page 2 of 2 ---\n{EN_PAGE_2}"
        assert second["hash"] == whole["hash"]
        past = await wire.error("note/read", {"path": "Papers/english.pdf", "pages": "2-5"})
        assert "has 2 page(s)" in past["message"]
        bad = await wire.error("note/read", {"path": "Papers/english.pdf", "pages": "two"})
        assert bad["code"] == -32602
        locked = await wire.error("note/read", {"path": "Papers/locked.pdf"})
        assert "encrypted" in locked["message"]
        headed = await wire.error("note/read", {"path": "Papers/english.pdf", "heading": "Intro"})
        assert headed["code"] == -32602 and "read it by pages" in headed["message"]
        call = {"name": "read_note", "arguments": {"path": "Papers/english.pdf", "pages": "1-1"}}
        [tool] = (await wire.result("tools/execute", {"calls": [call]}))["results"]
        assert not tool["isError"]
        assert "--- page 1 of 2 ---" in tool["content"] and EN_PAGE_2 not in tool["content"]


async def test_unreadable_pdfs_are_skipped_with_one_line_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="plugin_bridge.vault"):
        async with running_bridge(tmp_path, vault_root=_vault(tmp_path)) as bridge:
            wire = await bridge.wire()
            assert (await wire.result("health"))["index"]["unreadablePdfs"] == 2
            found = await wire.result("vault/search", {"query": "secret"})
            assert found["results"] == []
    lines = [r.getMessage() for r in caplog.records if "Not indexing" in r.getMessage()]
    assert sorted(lines) == [
        "Not indexing Papers/broken.pdf: pdf damaged.",
        "Not indexing Papers/locked.pdf: pdf encrypted.",
    ]


class _Counting(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    async def _embed_once(self, texts: list[str]) -> Batch:
        self.texts += texts
        return await super()._embed_once(texts)


async def test_a_changed_pdf_re_embeds_only_its_changed_pages(tmp_path: Path) -> None:
    embedder = _Counting()
    root = _vault(tmp_path)
    async with running_bridge(tmp_path, vault_root=root, embedder=embedder) as bridge:
        assert any(EN_PAGE_2 in text for text in embedder.texts)
        found = await bridge.wire()
        semantic = await found.result(
            "vault/search", {"query": "herons lighthouse keeper", "mode": "semantic"}
        )
        first = semantic["results"][0]
        assert (first["path"], first["page"]) == ("Papers/english.pdf", 2)
        embedder.texts.clear()
        pdf = root / "Papers" / "english.pdf"
        pdf.write_bytes(make_pdf(["An introduction to coastal birds.", "Herons fly south."]))
        bridge.vault.index.notify_changed("Papers/english.pdf")
        await bridge.vault.index.wait_until_idle(10)
        assert bridge.vault.semantic is not None
        await wait_for(lambda: bool(embedder.texts))
        await bridge.vault.semantic.wait_until_idle(10)
        assert len(embedder.texts) == 1 and "Herons fly south." in embedder.texts[0]


async def test_a_pdf_with_the_words_on_one_page_ranks_above_one_with_them_spread(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    # more of each word (BM25 alone would rank it first), but on three different pages
    spread = ["Amber, amber, amber glass.", "An otter, otter, otter.", "Lyon, Lyon, Lyon."]
    (root / "spread.pdf").write_bytes(make_pdf(spread))
    (root / "together.pdf").write_bytes(make_pdf(["Weather.", "The amber otter of Lyon sleeps."]))
    async with running_bridge(tmp_path, vault_root=root) as bridge:
        wire = await bridge.wire()
        found = await wire.result("vault/search", {"query": "amber otter lyon"})
    ranked = [(hit["path"], hit["page"]) for hit in found["results"]]
    assert ranked == [("together.pdf", 2), ("spread.pdf", 1)]
