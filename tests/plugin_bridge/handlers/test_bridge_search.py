"""vault/search modes, vault/related, index/progress and index/confirmEmbedding over a real
socket, with the deterministic fake embedder; without an embedder nothing changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llm_service import ScriptedProvider
from llm_service.embedders import FakeEmbedder
from tests.helpers.bridge import running_bridge

KAFKA = "Projects/Kafka pipeline.md"


async def test_without_an_embedder_search_is_lexical_as_before(tmp_path: Path) -> None:
    """No embedder: every mode answers exactly today's lexical results; related is not ready."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        expected = [h.path for h in bridge.vault.index.search("kafka", 10).hits]
        for mode in (None, "semantic", "hybrid"):
            params: dict[str, Any] = {"query": "kafka"} | ({"mode": mode} if mode else {})
            result = await wire.result("vault/search", params)
            assert result["mode"] == "lexical"
            assert [r["path"] for r in result["results"]] == expected
            assert all(r["matchedBy"] == ["lexical"] for r in result["results"])
        assert await wire.result("vault/related", {"path": KAFKA}) == {
            "results": [],
            "ready": False,
        }
        assert (await wire.result("health"))["index"]["embedder"] is None


async def test_search_defaults_to_hybrid_once_vectors_are_ready(tmp_path: Path) -> None:
    """With vectors, search is hybrid, says who found what; health/initialize show the embedder."""
    async with running_bridge(tmp_path, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire(initialize=False)
        init = await wire.result(
            "initialize",
            {
                "token": bridge.app.token,
                "protocolVersion": 1,
                "client": {"name": "t", "version": "0"},
            },
        )
        status = init["vault"]["embedder"]
        assert status["model"] == "fake:hashed-ngrams" and status["ready"]
        assert status["chunksEmbedded"] >= 16 and status["phase"] == "ready"
        assert (await wire.result("health"))["index"]["embedder"] == status
        result = await wire.result("vault/search", {"query": "consumer lag kafka"})
        assert result["mode"] == "hybrid"
        sides = {r["path"]: r["matchedBy"] for r in result["results"]}
        assert sides[KAFKA] == ["lexical", "semantic"]  # in both rankings
        # it has "kafka" but not "lag": any word finds a note lexically (ranked below KAFKA)
        assert sides["Projects/Reading list.md"] == ["lexical", "semantic"]
        assert ["semantic"] in sides.values()  # notes with none of the words: vectors only
        semantic = await wire.result("vault/search", {"query": "kafka", "mode": "semantic"})
        assert semantic["mode"] == "semantic"
        assert all(r["matchedBy"] == ["semantic"] for r in semantic["results"])


async def test_folder_and_tag_filters_hold_in_every_mode(tmp_path: Path) -> None:
    """folder and tag keep only notes inside the folder / with the tag, semantic included."""
    async with running_bridge(tmp_path, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire()
        for mode in ("lexical", "semantic", "hybrid"):
            inside = await wire.result(
                "vault/search", {"query": "notes", "mode": mode, "folder": "Projects"}
            )
            assert inside["results"]
            assert all(r["path"].startswith("Projects/") for r in inside["results"])
        tagged = await wire.result(
            "vault/search", {"query": "study", "mode": "semantic", "tag": "language"}
        )
        assert {r["path"] for r in tagged["results"]} == {
            "Languages/学习中文.md",
            "Languages/日本語の勉強.md",
        }


async def test_chinese_and_japanese_queries_find_their_notes(tmp_path: Path) -> None:
    """CJK notes are chunked, embedded and found semantically over the wire."""
    async with running_bridge(tmp_path, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire()
        for query, path in (
            ("学习中文的方法", "Languages/学习中文.md"),
            ("日本語の勉強", "Languages/日本語の勉強.md"),
        ):
            result = await wire.result("vault/search", {"query": query, "mode": "semantic"})
            assert result["results"][0]["path"] == path


async def test_related_notes_report_links_both_ways(tmp_path: Path) -> None:
    """Related notes exclude the note itself, are ordered, and flag links both ways."""
    async with running_bridge(tmp_path, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire()
        result = await wire.result("vault/related", {"path": KAFKA, "limit": 20})
        assert result["ready"] and KAFKA not in [r["path"] for r in result["results"]]
        by_path = {r["path"]: r for r in result["results"]}
        reading = by_path["Projects/Reading list.md"]
        assert reading["linksTo"] and reading["linkedFrom"]
        assert by_path["Reference/Event streaming.md"]["linksTo"]
        scores = [r["score"] for r in result["results"]]
        assert scores == sorted(scores, reverse=True)
        missing = await wire.error("vault/related", {"path": "Nowhere.md"})
        hidden = await wire.error("vault/related", {"path": ".obsidian/app.md"})
        assert (missing["code"], hidden["code"]) == (-32020, -32023)


async def test_a_new_note_is_embedded_and_progress_is_broadcast(tmp_path: Path) -> None:
    """A new note is embedded in the background, index/progress reaches ready, vectors find it."""
    async with running_bridge(tmp_path, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire()
        await wire.result(
            "note/create", {"path": "Ideas/Zeppelin.md", "content": "# Zeppelin\nAirship travel."}
        )
        semantic = bridge.vault.semantic
        assert semantic is not None
        await semantic.wait_until_idle(15)
        result = await wire.result("health")  # reads the notifications sent meanwhile
        assert result["status"] == "ok"
        phases = [
            n["params"]["phase"] for n in wire.notifications if n["method"] == "index/progress"
        ]
        assert "embedding" in phases and phases[-1] == "ready"
        found = await wire.result("vault/search", {"query": "airship travel", "mode": "semantic"})
        assert found["results"][0]["path"] == "Ideas/Zeppelin.md"


class PaidFake(FakeEmbedder):
    paid = True


async def test_paid_embedding_waits_for_confirm_embedding(tmp_path: Path) -> None:
    """A paid job over the limit waits for index/confirmEmbedding, then runs and records spend."""
    embedder = PaidFake("text-embedding-3-small")
    async with running_bridge(
        tmp_path, embedder=embedder, semantic_options={"confirm_over_usd": 0.0}
    ) as bridge:
        semantic = bridge.vault.semantic
        assert semantic is not None
        wire = await bridge.wire()
        status = (await wire.result("health"))["index"]["embedder"]
        assert (status["phase"], status["ready"], embedder.texts_seen) == ("confirm", False, [])
        assert semantic.progress.estimated_tokens and semantic.progress.estimated_usd
        assert (await wire.result("vault/search", {"query": "kafka"}))["mode"] == "lexical"
        assert await wire.result("index/confirmEmbedding", {}) == {"waiting": True}
        await semantic.wait_until_idle(15)
        assert (await wire.result("health"))["index"]["embedder"]["ready"]
        usage = await wire.result("usage/summary")
        (row,) = [m for m in usage["today"]["byModel"] if m["model"] == "text-embedding-3-small"]
        assert row["inputTokens"] > 0 and row["costUsd"] > 0


async def test_search_notes_tool_gives_best_chunks_as_excerpts(tmp_path: Path) -> None:
    """The model's search_notes tool searches hybrid and shows a vector hit's best section."""
    async with running_bridge(tmp_path, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire()
        result = await wire.result(
            "tools/execute", {"calls": [{"name": "search_notes", "arguments": {"query": "kafka"}}]}
        )
        content = json.loads(result["results"][0]["content"])
        first = content["results"][0]
        assert "excerpt" in first and "heading" in first and len(first["excerpt"]) <= 800


async def test_search_summarize_gives_the_model_chunks_not_whole_notes(tmp_path: Path) -> None:
    """With vectors, each source note is sent as its best chunks under their headings."""
    provider = ScriptedProvider()
    provider.enqueue_text("See [[Projects/Kafka pipeline]].")
    async with running_bridge(tmp_path, provider=provider, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire()
        result = await wire.result("command/searchSummarize", {"query": "consumer lag", "limit": 3})
        assert result["sources"] == [KAFKA]
    prompt = provider.requests[0].messages[0].text
    kafka = (tmp_path / "vault" / KAFKA).read_text(encoding="utf-8")
    assert "## [[Projects/Kafka pipeline]]" in prompt and "### " in prompt
    assert kafka.strip() not in prompt  # chunks, not the whole file with its front matter


async def test_settings_update_switches_or_stops_the_embedder(tmp_path: Path) -> None:
    """settings/update switches the embedder, or stops it with null; a bad spec is -32602."""
    async with running_bridge(tmp_path, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire()
        bad = await wire.error("settings/update", {"embedder": "cohere:x"})
        assert bad["code"] == -32602 and "ollama:MODEL" in bad["message"]
        result = await wire.result("settings/update", {"embedder": "fake:second"})
        assert result["embedder"] == "fake:second"
        semantic = bridge.vault.semantic
        assert semantic is not None and semantic.model_id == "fake:second"
        await semantic.wait_until_idle(15)
        status = (await wire.result("health"))["index"]["embedder"]
        assert (status["model"], status["ready"]) == ("fake:second", True)
        found = await wire.result("vault/search", {"query": "kafka", "mode": "semantic"})
        assert found["mode"] == "semantic"
        await wire.result("settings/update", {"embedder": None})
        assert (await wire.result("health"))["index"]["embedder"] is None
        assert (await wire.result("vault/search", {"query": "kafka"}))["mode"] == "lexical"
