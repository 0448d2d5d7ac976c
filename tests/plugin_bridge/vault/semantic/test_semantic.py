"""Chunks, the vector index, RRF, and the background embedding job over a real index: only
changed chunks are embedded again, model switches keep serving, CJK notes, related notes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from llm_service.embedders import FakeEmbedder
from plugin_bridge.vault.chunks import MAX_CHARS, chunk_note, embed_text
from plugin_bridge.vault.lexical.index import SearchIndex
from plugin_bridge.vault.lexical.query import Query
from plugin_bridge.vault.lexical.reader import IndexReader
from plugin_bridge.vault.semantic import semantic_index
from plugin_bridge.vault.semantic.hybrid import fuse, lexical_confidence, related_notes, rrf
from plugin_bridge.vault.semantic.semantic_index import Progress, SemanticIndex
from plugin_bridge.vault.semantic.vectors import ExactVectorIndex
from plugin_bridge.vault.vault import Mode, NoteResults, Related, Vault

NOTES = {
    "Garden/Tomatoes.md": "# Tomatoes\nWater the tomato plants every morning in summer.\n"
    + "Stake them when they reach knee height and pinch out the side shoots. " * 14
    + "\n## Pests\nAphids on tomato leaves: spray soapy water on the leaves.",
    "Garden/Roses.md": "# Roses\nPrune roses in late winter, above a bud. See [[Tomatoes]].",
    "Work/Deploy.md": "# Deploy\nThe release pipeline builds the container and pushes it.",
    "中文/花园.md": "# 花园\n番茄需要每天浇水，夏天更要注意。",
    "日本語/天気.md": "# 天気\n東京の天気は明日雨です。傘を持っていきましょう。",
}

WORDS = [
    "care",
    "water",
    "light",
    "soil",
    "frost",
    "bud",
    "pipeline",
    "release",
    "invoice",
    "ledger",
    "ticket",
    "window",
    "lamp",
    "harvest",
    "compost",
    "shade",
    "morning",
    "evening",
    "budget",
    "branch",
    "merge",
    "audit",
    "seed",
]


def write(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


class Harness:
    def __init__(self, root: Path, data: Path) -> None:
        self.root, self.data = root, data
        self.notes: Vault | None = None
        self.index: SearchIndex | None = None
        self.semantic: SemanticIndex | None = None
        self.progress: list[Progress] = []

    async def start(self, embedder: FakeEmbedder | None, **options: Any) -> Vault:
        self.notes = Vault(self.root, self.data, watch=False)
        if embedder is not None:
            self.semantic = self.notes.use_embedder(
                embedder, on_progress=self.progress.append, **options
            )
        await self.notes.start()
        self.index = self.notes.index
        await self.index.wait_until_idle(20)
        return self.notes

    async def open(self, embedder: FakeEmbedder, **options: Any) -> SemanticIndex:
        await self.start(embedder, **options)
        assert self.semantic is not None
        await self.semantic.wait_until_idle(20)
        return self.semantic

    async def search(
        self, query: str, limit: int, mode: Mode | None = None, folder: str | None = None
    ) -> NoteResults:
        assert self.notes is not None
        return await self.notes.search(query, limit, mode, folder)

    async def related(self, path: str, limit: int = 10) -> list[Related]:
        assert self.notes is not None
        return (await self.notes.related(path, limit)).notes

    async def close(self) -> None:
        if self.notes is not None:
            await self.notes.close()

    async def change(self, rel: str) -> None:
        assert self.index is not None and self.semantic is not None
        self.index.notify_changed(rel)
        await asyncio.sleep(0)  # let the write's wake-up reach the job
        await self.semantic.wait_until_idle(20)


@pytest.fixture
async def vault(tmp_path: Path) -> AsyncIterator[Harness]:
    root = tmp_path / "vault"
    write(root, NOTES)
    harness = Harness(root, tmp_path / "data")
    yield harness
    await harness.close()


# -- chunks ------------------------------------------------------------------------------------


def test_chunks_follow_headings_with_title_and_path_prefixed() -> None:
    """Each section is a chunk named by its heading path; code-fenced '#' lines are text."""
    body = (
        "An opening paragraph that is long enough to stand alone.\n\n# Setup\n## Linux\n"
        "Install it with the package manager of your distribution.\n"
        "```\n# not a heading\n```\n# Usage\nRun the command with the vault folder as argument."
    )
    chunks = chunk_note("Tool", body)
    assert [c.heading for c in chunks] == ["", "Setup > Linux", "Usage"]
    assert "# not a heading" in chunks[1].text
    assert embed_text("Tool", chunks[1].heading, chunks[1].text).startswith("Tool\nSetup > Linux\n")


def test_long_sections_are_cut_to_the_bound_and_hashes_follow_content() -> None:
    """Chunks stay under the bound; a hash ignores the title unless the note has no text."""
    body = "# Long\n" + "\n\n".join(f"Paragraph {i} " + "word " * 80 for i in range(20))
    chunks = chunk_note("T", body)
    assert len(chunks) > 3 and all(len(c.text) <= MAX_CHARS for c in chunks)
    assert [c.hash for c in chunk_note("T", body)] == [c.hash for c in chunks]
    assert chunk_note("Renamed", body)[0].hash == chunks[0].hash
    assert [(c.heading, c.text) for c in chunk_note("Empty", "")] == [("", "")]
    assert chunk_note("Empty", "")[0].hash != chunk_note("Blank", "")[0].hash


# -- vector index and fusion -----------------------------------------------------------------


def test_exact_vector_index_finds_nearest_and_forgets_removed() -> None:
    """Top-k by cosine, optionally among allowed keys; removal moves rows without losing any."""
    index = ExactVectorIndex(2)
    index.add(["a", "b", "c"], np.array([[1, 0], [0, 1], [0.8, 0.6]], dtype=np.float32))
    query = np.array([1, 0], dtype=np.float32)
    assert [k for k, _ in index.search(query, 2)] == ["a", "c"]
    assert [k for k, _ in index.search(query, 5, allowed={"b", "zz"})] == ["b"]
    index.add(["d"], np.array([[0.6, 0.8]], dtype=np.float32))  # grows past a load
    assert [k for k, _ in index.search(np.array([0.6, 0.8], dtype=np.float32), 1)] == ["d"]
    index.remove(["a", "missing", "d"])
    assert len(index) == 2 and [k for k, _ in index.search(query, 1)] == ["c"]
    assert index.get(["b"]).tolist() == [[0.0, 1.0]]


def test_rrf_fuses_hand_made_rankings() -> None:
    """A note high in both lists beats one first in a single list; scores are sums of
    weight / (k + rank) (k = 1)."""
    fused = rrf([["a", "b", "c"], ["b", "d", "a"]])
    assert [key for key, _ in fused] == ["b", "a", "d", "c"]
    assert dict(fused)["b"] == pytest.approx(1 / 3 + 1 / 2)
    assert dict(fused)["c"] == pytest.approx(1 / 4)
    weighted = dict(rrf([["a"], ["b"]], k=60, weights=[0.5, 1.0]))
    assert weighted == {"a": pytest.approx(0.5 / 61), "b": pytest.approx(1 / 61)}


def test_each_side_counts_as_much_as_it_can_be_trusted() -> None:
    """Lexical scores carry the number of terms matched in their whole part: the word ranking
    is weighted by 1.5 × that share of the query's terms, squared; the vector ranking is
    dropped when the words are sure and the two sides' best ten share fewer than two notes."""
    sure = fuse([("w1", 3.4), ("w2", 2.9)], ["s1", "w1", "w2"], terms=3)  # w1: all 3 words
    assert [key for key, _ in sure] == ["w1", "w2", "s1"]  # they share two notes: both count
    assert dict(sure)["s1"] == pytest.approx(1 / 2)
    agreeing = fuse([("w1", 2.5), ("b", 2.4), ("c", 2.3)], ["s1", "b", "c"], terms=2)
    assert [key for key, _ in agreeing] == ["b", "w1", "c", "s1"]  # sure words outvote s1
    unsure = fuse([("w1", 1.4), ("w2", 1.3)], ["s1", "s2"], terms=3)  # one word of three
    assert [key for key, _ in unsure] == ["s1", "s2", "w1", "w2"]
    assert dict(unsure)["w2"] == pytest.approx(1.5 * (1 / 3) ** 2 / (1 + 2))
    apart = fuse([("w1", 2.5), ("w2", 2.1)], ["s1", "s2"], terms=2)  # sure, no note shared
    assert [key for key, _ in apart][:2] == ["w1", "w2"] and dict(apart)["s1"] == 0
    assert lexical_confidence(2.7, 0) == 1.0  # a CJK-only query that found notes
    assert lexical_confidence(0.0, 0) == 0.0
    assert [key for key, _ in fuse([], ["s1"], terms=2)] == ["s1"]


# -- the embedding job -----------------------------------------------------------------------


async def test_every_chunk_is_embedded_once_and_progress_reaches_ready(vault: Harness) -> None:
    """The first start embeds each distinct chunk once and reports embedding then ready."""
    embedder = FakeEmbedder()
    semantic = await vault.open(embedder)
    assert semantic.ready
    assert semantic.chunks_embedded == len(set(embedder.texts_seen)) == len(embedder.texts_seen)
    phases = [p.phase for p in vault.progress]
    assert "embedding" in phases and phases[-1] == "ready"
    assert vault.progress[-1].done == vault.progress[-1].total == semantic.chunks_embedded


async def test_a_restart_with_unchanged_notes_embeds_nothing(vault: Harness) -> None:
    """Vectors persist in the index file: the second start sends no text to the embedder."""
    await vault.open(FakeEmbedder())
    count = vault.semantic.chunks_embedded if vault.semantic else 0
    await vault.close()
    again = FakeEmbedder()
    semantic = await vault.open(again)
    assert again.texts_seen == [] and semantic.ready and semantic.chunks_embedded == count


async def test_edit_move_and_delete_reembed_only_what_changed(vault: Harness) -> None:
    """An edit embeds its changed chunk, a move or rename nothing; deletes vanish at once."""
    embedder = FakeEmbedder()
    semantic = await vault.open(embedder)
    before = semantic.chunks_embedded
    embedder.texts_seen.clear()
    tomatoes = vault.root / "Garden/Tomatoes.md"
    tomatoes.write_text(NOTES["Garden/Tomatoes.md"].replace("soapy water", "neem oil"), "utf-8")
    await vault.change("Garden/Tomatoes.md")
    assert len(embedder.texts_seen) == 1 and "neem oil" in embedder.texts_seen[0]
    assert semantic.chunks_embedded == before + 1  # the old chunk's vector is kept a while

    embedder.texts_seen.clear()
    (vault.root / "Archive").mkdir()
    tomatoes.rename(vault.root / "Archive/Tomatoes.md")
    await vault.change("Garden/Tomatoes.md")
    await vault.change("Archive/Tomatoes.md")
    (vault.root / "Archive/Tomatoes.md").rename(vault.root / "Archive/Tomato plants.md")
    await vault.change("Archive/Tomatoes.md")
    await vault.change("Archive/Tomato plants.md")
    assert embedder.texts_seen == []  # a move and a rename embed nothing
    assert semantic.chunks_embedded == before + 1

    (vault.root / "Work/Deploy.md").unlink()
    await vault.change("Work/Deploy.md")
    found = await vault.search("release pipeline", 9, mode="semantic")
    assert "Work/Deploy.md" not in [hit.path for hit in found.hits]
    await vault.close()
    restarted = await vault.open(FakeEmbedder())
    assert restarted.chunks_embedded == before - 1  # a start drops vectors of chunks gone


class GatedEmbedder(FakeEmbedder):
    """Waits for ``gate`` before answering, so a test can look while a job is running."""

    def __init__(self, model: str, **kw: Any) -> None:
        super().__init__(model, **kw)
        self.gate = asyncio.Event()

    async def _embed_once(self, texts: list[str]) -> Any:
        await self.gate.wait()
        return await super()._embed_once(texts)


async def test_a_model_switch_builds_in_background_while_the_old_model_serves(
    vault: Harness,
) -> None:
    """The old model answers while a new one builds; then the new one answers alone."""
    assert vault.index is None
    semantic = await vault.open(FakeEmbedder("old", dims=128))
    new = GatedEmbedder("new", dims=96)
    await semantic.switch(new)
    await asyncio.sleep(0)
    found = await vault.search("aphids on tomato leaves, soapy water", 3, mode="semantic")
    assert found.mode == "semantic" and found.hits[0].path == "Garden/Tomatoes.md"
    assert semantic.model_id == "fake:new"
    new.gate.set()
    await semantic.wait_until_idle(20)
    assert semantic.ready and semantic.chunks_embedded == len(new.texts_seen)
    models = semantic.index.read(
        lambda reader: reader.conn.execute("SELECT DISTINCT model FROM vectors").fetchall()
    )
    assert models == [("fake:new",)]
    found = await vault.search("aphids on tomato leaves, soapy water", 3, mode="semantic")
    assert found.hits[0].path == "Garden/Tomatoes.md"


async def test_without_vectors_every_mode_answers_lexically(vault: Harness) -> None:
    """No semantic index (no embedder) means today's lexical search whatever mode is asked."""
    await vault.start(None)
    assert vault.index is not None
    for mode in (None, "semantic", "hybrid"):
        found = await vault.search("tomato", 5, mode=mode)  # type: ignore[arg-type]
        assert found.mode == "lexical"
        assert [h.path for h in found.hits] == [
            h.path for h in vault.index.search("tomato", 5).hits
        ]
        assert all(h.matched_by == ("lexical",) for h in found.hits)


async def test_hybrid_says_which_side_found_each_note(vault: Harness) -> None:
    """A word only one note has is found by both sides; other notes only by vectors."""
    await vault.open(FakeEmbedder())
    found = await vault.search("aphids", 5)
    assert found.mode == "hybrid"
    assert found.hits[0].path == "Garden/Tomatoes.md"
    assert found.hits[0].matched_by == ("lexical", "semantic")
    assert "Aphids" in found.hits[0].snippet and found.hits[0].snippet.startswith(
        "Tomatoes > Pests"
    )
    assert all(h.matched_by == ("semantic",) for h in found.hits[1:])


async def test_folder_and_tag_filters_apply_to_vectors(vault: Harness) -> None:
    """folder limits semantic hits to notes inside it."""
    await vault.open(FakeEmbedder())
    found = await vault.search("tomato", 5, mode="semantic", folder="Work")
    assert [h.path for h in found.hits] == ["Work/Deploy.md"]


async def test_filters_past_the_graph_threshold_give_what_exact_search_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the graph answering, a path or tag filter over half the vault (more chunks than
    the bound for an exact search, set low here) takes the graph's nearest chunks that pass
    (not a list of every chunk in it), and finds the same notes, in the same order, as exact
    search; a filter too narrow for that is searched exactly."""
    monkeypatch.setattr(semantic_index, "EXACT_FILTER", 20)
    words = np.random.default_rng(0).choice(WORDS, size=(400, 6)).tolist()
    notes = {
        f"{'Garden' if n % 2 else 'Work'}/Note {n}.md": f"#{'green' if n % 2 else 'grey'}\n"
        f"{['Tomatoes', 'Roses', 'Deploys', 'Invoices'][n % 4]} need {' '.join(words[n])}.\n"
        for n in range(400)
    }
    notes["Attic/Lamp.md"] = "An old lamp that needs care."
    write(tmp_path / "vault", notes)
    listed: list[str] = []
    listing = IndexReader.filtered_chunk_hashes

    def counted(reader: IndexReader, query: Query) -> list[str]:
        listed.append(query.text)
        return listing(reader, query)

    monkeypatch.setattr(IndexReader, "filtered_chunk_hashes", counted)
    found: dict[int, list[list[str]]] = {}
    for threshold in (1, 1_000_000):  # the graph, then exact search alone
        harness = Harness(tmp_path / "vault", tmp_path / f"data{threshold}")
        await harness.open(FakeEmbedder(), ann_threshold=threshold)
        vectors = harness.semantic.vector_index() if harness.semantic else None
        assert vectors is not None and vectors.wait_until_built(30)
        assert vectors.approximate == (threshold == 1)
        found[threshold] = [
            [hit.path for hit in (await harness.search(query, 5, mode)).hits]
            for query in ("tomatoes care path:Garden", "roses tag:#green", "lamp path:Attic")
            for mode in ("semantic", "hybrid")
        ]
        await harness.close()
        if threshold == 1:  # only the narrow filter (one note) was listed
            assert listed == ["lamp", "lamp"]
    assert found[1] == found[1_000_000]
    assert all(path.startswith("Garden/") for path in found[1][0] + found[1][2])
    assert found[1][4] == ["Attic/Lamp.md"]


async def test_the_graph_searches_beside_the_words_and_finds_what_it_finds_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the graph answering, an unfiltered hybrid search starts the graph's search in a
    thread of its own while the words are searched: the hits are those of the same search
    made after the words, one at a time; a filtered one does not start it."""
    words = np.random.default_rng(1).choice(WORDS, size=(300, 6)).tolist()
    write(
        tmp_path / "vault",
        {f"Notes/Note {n}.md": f"Tomatoes need {' '.join(words[n])}.\n" for n in range(300)},
    )
    harness = Harness(tmp_path / "vault", tmp_path / "data")
    semantic = await harness.open(FakeEmbedder(), ann_threshold=1)
    vectors = semantic.vector_index()
    assert vectors is not None and vectors.wait_until_built(30) and vectors.approximate
    started: list[int] = []
    ahead = SemanticIndex.search_ahead

    def counted(index: SemanticIndex, vector: Any, k: int) -> Any:
        started.append(k)
        return ahead(index, vector, k)

    queries = ("tomatoes " + " ".join(words[n][:2]) for n in range(0, 300, 37))
    asked = [*queries, "tomatoes path:Notes"]
    monkeypatch.setattr(SemanticIndex, "search_ahead", counted)
    beside = [[h.path for h in (await harness.search(q, 5, "hybrid")).hits] for q in asked]
    assert len(started) == len(asked) - 1  # not for the filtered one
    monkeypatch.setattr(SemanticIndex, "search_ahead", lambda index, vector, k: None)
    after = [[h.path for h in (await harness.search(q, 5, "hybrid")).hits] for q in asked]
    await harness.close()
    assert beside == after and all(beside)


async def test_a_filter_of_few_chunks_is_searched_exactly_without_asking_the_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter whose notes hold few chunks (a tag on a handful of notes) is scored exactly
    among them straight away: the graph's candidates are never checked against it."""
    write(
        tmp_path / "vault",
        {
            f"Notes/Note {n}.md": f"{'#rare ' if n < 3 else ''}Tomatoes number {n}.\n"
            for n in range(60)
        },
    )
    harness = Harness(tmp_path / "vault", tmp_path / "data")
    await harness.open(FakeEmbedder(), ann_threshold=1)
    vectors = harness.semantic.vector_index() if harness.semantic else None
    assert vectors is not None and vectors.wait_until_built(30) and vectors.approximate
    checked: list[int] = []
    among = IndexReader.filtered_among

    def counted(reader: IndexReader, query: Query, hashes: list[str]) -> set[str]:
        checked.append(len(hashes))
        return among(reader, query, hashes)

    monkeypatch.setattr(IndexReader, "filtered_among", counted)
    found = await harness.search("tomatoes tag:#rare", 5, "semantic")
    await harness.close()
    assert sorted(hit.path for hit in found.hits) == [f"Notes/Note {n}.md" for n in range(3)]
    assert checked == []


@pytest.mark.parametrize(
    ("query", "expected"), [("番茄浇水", "中文/花园.md"), ("東京の天気", "日本語/天気.md")]
)
async def test_chinese_and_japanese_notes_are_found_through_vectors(
    vault: Harness, query: str, expected: str
) -> None:
    """CJK chunks are embedded and a CJK query finds them semantically and in hybrid mode."""
    await vault.open(FakeEmbedder())
    for mode in ("semantic", "hybrid"):
        found = await vault.search(query, 3, mode=mode)  # type: ignore[arg-type]
        assert found.hits[0].path == expected


async def test_related_notes_exclude_the_note_and_say_how_they_link(vault: Harness) -> None:
    """Roses links to Tomatoes: the two are related and the link is reported both ways."""
    semantic = await vault.open(FakeEmbedder())
    related = await vault.related("Garden/Roses.md", 3)
    assert related and all(r.path != "Garden/Roses.md" for r in related)
    tomatoes = next(r for r in related if r.path == "Garden/Tomatoes.md")
    assert tomatoes.links_to and not tomatoes.linked_from
    back = await vault.related("Garden/Tomatoes.md", 5)
    roses = next(r for r in back if r.path == "Garden/Roses.md")
    assert roses.linked_from and not roses.links_to
    assert semantic.index.read(lambda reader: related_notes(reader, semantic, "Nope.md")) == []


async def test_related_notes_say_why_shared_links_tags_and_the_closest_heading(
    vault: Harness,
) -> None:
    """Two notes that link to the same note and carry the same tag report both; the closest
    passage's heading comes too, and a link to one another is not a shared link."""
    write(
        vault.root,
        {
            "Garden/Beds.md": "# Beds\n## Compost\nRoses and [[Tomatoes]] like compost. #Garden",
            "Garden/Paths.md": "# Paths\nGravel by the [[Tomatoes]] and [[Beds]]. #garden #paths",
        },
    )
    await vault.open(FakeEmbedder())
    related = await vault.related("Garden/Paths.md", 5)
    beds = next(r for r in related if r.path == "Garden/Beds.md")
    assert beds.shared_links == ("tomatoes",) and beds.shared_tags == ("garden",)
    assert beds.heading == "Beds > Compost"  # its heading path
    roses = next(r for r in related if r.path == "Garden/Roses.md")
    assert roses.shared_links == ("tomatoes",) and roses.shared_tags == ()


class PaidEmbedder(FakeEmbedder):
    paid = True


async def test_paid_embedding_over_the_limit_waits_for_approval(vault: Harness) -> None:
    """The estimate is reported with phase confirm and nothing is sent until approve()."""
    spend: list[tuple[str, int]] = []
    embedder = PaidEmbedder("text-embedding-3-small")
    semantic = await vault.open(
        embedder, confirm_over_usd=0.0, on_spend=lambda m, t: spend.append((m, t))
    )
    assert semantic.progress.phase == "confirm" and not semantic.ready
    assert embedder.texts_seen == []
    estimate = semantic.progress
    assert estimate.estimated_tokens and estimate.estimated_usd is not None
    semantic.approve()
    await asyncio.sleep(0)
    await semantic.wait_until_idle(20)
    assert semantic.ready and spend and spend[0][0] == "text-embedding-3-small"


class BrokenEmbedder(FakeEmbedder):
    """An embedder whose server is down."""

    async def _embed_once(self, texts: list[str]) -> Any:
        from llm_service.errors import LLMError

        raise LLMError(
            "Ollama is not reachable at http://127.0.0.1:9: start it.", code="network_error"
        )


async def test_an_unreachable_embedder_reports_error_and_search_stays_lexical(
    vault: Harness,
) -> None:
    """The job reports phase error with the sentence; searches keep answering lexically."""
    semantic = await vault.open(BrokenEmbedder(max_attempts=1))
    assert semantic.progress.phase == "error" and not semantic.ready
    assert "not reachable" in (semantic.progress.error or "")
    found = await vault.search("tomato", 3)
    assert found.mode == "lexical" and found.hits


async def test_a_query_the_embedder_cannot_embed_is_answered_lexically(vault: Harness) -> None:
    """Vectors are ready but the embedder fails on the query: the search answers by words."""
    embedder = FakeEmbedder()
    await vault.open(embedder)

    async def down(texts: list[str]) -> Any:
        from llm_service.errors import LLMError

        raise LLMError("Ollama is not reachable.", code="network_error")

    embedder._embed_once = down  # type: ignore[method-assign]
    found = await vault.search("aphids", 3)
    assert found.mode == "lexical" and found.hits[0].path == "Garden/Tomatoes.md"
