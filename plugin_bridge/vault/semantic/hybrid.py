"""Lexical, semantic and hybrid note search, and related notes.

Hybrid is a weighted reciprocal rank fusion (:func:`fuse`) of the FTS5 ranking and the vector
ranking, after rolling the vector hits up from chunks to notes (a note ranks by its best
chunk). Each side counts as much as it can be trusted: the word ranking 1.5 times the share of
the query's words its best note holds, squared (sure words outvote the vectors; a question
whose words are scattered over stray notes does not pull them above what the vectors found);
the vector ranking not at all when the words are sure and the vectors' best ten share fewer
than two notes with theirs (an embedder that does not know the language). docs/search.md has
the measurements. Each result says which side found it and shows, as its snippet, its best
chunk when the vectors found it.

Everything here but :func:`fuse` and its parts runs on the index's read door, given its
:class:`IndexReader` and a parsed :class:`Query`: ``Vault.search`` and ``Vault.related``
(``vault/vault.py``) are the callers, in one hop each.
"""

from __future__ import annotations

import logging
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, Literal

from plugin_bridge.vault.lexical.cjk import snippet_around
from plugin_bridge.vault.lexical.index import clamp
from plugin_bridge.vault.lexical.parse import link_forms
from plugin_bridge.vault.lexical.reader import is_damage
from plugin_bridge.vault.pdf import is_pdf_name, page_of_snippet, page_of_words, split_body
from plugin_bridge.vault.semantic.scripts import same_script_first

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from plugin_bridge.vault.lexical.query import Query
    from plugin_bridge.vault.lexical.reader import IndexReader, SearchHit
    from plugin_bridge.vault.semantic.semantic_index import ChunkHit, SemanticIndex

logger = logging.getLogger(__name__)
Mode = Literal["lexical", "semantic", "hybrid"]
Side = Literal["lexical", "semantic"]
RRF_K: Final = 1
"""Reciprocal rank fusion's k: small, so that the first places of each side count most
(measured against 0.5-60 on the help vaults' questions: docs/search.md)."""
LEXICAL_WEIGHT: Final = 1.5
"""The word ranking's weight when its best note holds every word (the vectors' is 1)."""
AGREE_TOP: Final = 10
MIN_AGREEMENT: Final = 0.2
"""Share of the two sides' best ten below which sure words outvote the vectors."""
CANDIDATES: Final = 30
"""Notes taken from each side before fusing (at least ``limit``)."""
CHUNKS_PER_NOTE: Final = 3
"""Chunks asked of the vector index per note wanted (several chunks share a note)."""
SNIPPET_CHARS: Final = 300


@dataclass(frozen=True)
class NoteHit:
    path: str
    title: str
    score: float
    snippet: str
    matched_by: tuple[Side, ...]
    chunks: tuple[ChunkHit, ...] = ()
    """The note's best chunks, best first (semantic and hybrid results)."""
    page: int | None = None
    """A PDF's page (1-based) the snippet is from; None for notes."""
    heading: str | None = None
    """The heading path (``Setup > Linux``) of the part the snippet is from; None above the
    first heading and for PDFs."""


@dataclass(frozen=True)
class NoteResults:
    hits: list[NoteHit]
    mode: Mode
    """The mode that answered (lexical while no vectors are ready)."""
    pending: int
    took_ms: float


@dataclass(frozen=True)
class Related:
    path: str
    title: str
    score: float
    links_to: bool
    """The note asked about links to this one."""
    linked_from: bool
    """This one links to the note asked about."""
    snippet: str = ""
    """The start of its closest chunk."""
    heading: str = ""
    """The headings above its closest chunk ("A > B"; "": none)."""
    shared_links: tuple[str, ...] = ()
    """Link targets both notes hold (sorted)."""
    shared_tags: tuple[str, ...] = ()
    """Tags both notes carry (sorted)."""


def rrf(
    rankings: Sequence[Sequence[str]],
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion: each key scores the sum of weight / (k + rank) over
    the rankings it is in (rank 1 = best; weight 1 unless given); best first, ties in
    first-seen order."""
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def lexical_confidence(top_score: float, terms: int) -> float:
    """How sure the word ranking is, 0-1: the share of the query's terms its best note holds
    (a lexical score's whole part counts them). A CJK-only query (0 terms) that found anything
    counts as sure: its bigrams are precise."""
    if terms == 0:
        return 1.0 if top_score > 0 else 0.0
    return min(1.0, math.floor(max(top_score, 0.0)) / terms)


def fuse(
    lexical: Sequence[tuple[str, float]], semantic: Sequence[str], terms: int
) -> list[tuple[str, float]]:
    """The hybrid ranking: RRF of both sides, the lexical one weighted by 1.5 × its
    confidence², the semantic one dropped when the words are sure and the two sides barely
    agree."""
    if not lexical:
        return rrf([semantic])
    confidence = lexical_confidence(lexical[0][1], terms)
    words = [path for path, _ in lexical]
    shared = len(set(words[:AGREE_TOP]) & set(semantic[:AGREE_TOP])) / AGREE_TOP
    vectors = 0.0 if confidence == 1.0 and shared < MIN_AGREEMENT else 1.0
    return rrf([words, semantic], weights=[LEXICAL_WEIGHT * confidence**2, vectors])


def roll_up(chunks: Sequence[ChunkHit]) -> dict[str, list[ChunkHit]]:
    """Chunk hits (best first) grouped by note path, notes in the order of their best chunk."""
    notes: dict[str, list[ChunkHit]] = {}
    for hit in chunks:
        notes.setdefault(hit.path, []).append(hit)
    return notes


def search_notes(
    reader: IndexReader,
    semantic: SemanticIndex | None,
    query: Query,
    limit: int,
    mode: Mode,
    vector: npt.NDArray[np.float32] | None,
) -> tuple[list[NoteHit], Mode]:
    """The best ``limit`` notes for ``query`` in ``mode`` (the query's ``vector`` for the
    semantic side) and the mode that answered: lexical when the vectors fail (the index being
    rebuilt: words still find notes)."""
    if mode == "lexical":
        return _search(reader, None, query, limit, mode, None), mode
    try:
        return _search(reader, semantic, query, limit, mode, vector), mode
    except sqlite3.Error as exc:
        if is_damage(exc):
            raise
        logger.warning("Semantic search failed (%s); answering lexically.", exc)
        return _search(reader, None, query, limit, "lexical", None), "lexical"


def _search(
    reader: IndexReader,
    semantic: SemanticIndex | None,
    query: Query,
    limit: int,
    mode: Mode,
    vector: npt.NDArray[np.float32] | None,
) -> list[NoteHit]:
    fusing = mode == "hybrid"
    wanted = max(limit, CANDIDATES) * CHUNKS_PER_NOTE
    ahead = None  # the graph searches in its own thread while the words are searched here
    if semantic is not None and vector is not None and fusing and not query.filtered:
        ahead = semantic.search_ahead(vector, wanted)
    lexical = (
        reader.search(
            query,
            clamp(max(limit, CANDIDATES) if fusing else limit),
            snippets=not fusing,  # only the few shown get one, below
            headings=True,
        )
        if mode != "semantic"
        else []
    )
    notes: dict[str, list[ChunkHit]] = {}
    if semantic is not None and vector is not None:
        within = query if query.filtered else None
        notes = roll_up(semantic.nearest_chunks(reader, vector, wanted, within, ahead))
        texts = [f"{chunks[0].title}\n{chunks[0].text}" for chunks in notes.values()]
        found = frozenset(hit.path for hit in lexical)
        notes = same_script_first(query.text, notes, texts, found)
    hits = _combine(mode, lexical, notes, limit, len(query.terms))
    if fusing and (bare := [hit.path for hit in hits if not hit.chunks]):
        made = reader.snippets(query, bare)
        hits = [
            hit if hit.chunks else _snippeted(hit, *made.get(hit.path, ("", None))) for hit in hits
        ]
    if any(is_pdf_name(hit.path) for hit in hits):
        terms = [term.text for term in query.terms] + list(query.cjk)
        hits = _on_pages(reader, hits, terms, rerank=mode == "lexical")
    return hits


def _combine(
    mode: Mode,
    lexical: Sequence[SearchHit],
    notes: dict[str, list[ChunkHit]],
    limit: int,
    terms: int,
) -> list[NoteHit]:
    lex = {hit.path: hit for hit in lexical}
    if mode == "lexical":
        return [
            NoteHit(
                h.path,
                h.title,
                h.score,
                h.snippet,
                ("lexical",),
                heading=_heading(h.path, h.heading),
            )
            for h in lex.values()
        ]
    if mode == "semantic":
        ranked = [(path, chunks[0].score) for path, chunks in notes.items()]
    else:
        ranked = fuse([(h.path, h.score) for h in lex.values()], list(notes), terms)
    hits = []
    for path, score in ranked[:limit]:
        chunks = notes.get(path, [])
        sides = _sides(path in lex, bool(chunks))
        under: str | None
        if chunks:
            title, snippet, under = chunks[0].title, _chunk_snippet(chunks[0]), chunks[0].heading
        else:
            title, snippet, under = lex[path].title, lex[path].snippet, lex[path].heading
        heading = _heading(path, under)
        hits.append(
            NoteHit(path, title, round(score, 6), snippet, sides, tuple(chunks), heading=heading)
        )
    return hits


def _heading(path: str, heading: str | None) -> str | None:
    """The heading path a hit shows: its best chunk's, else the one its snippet was cut under
    (made with the snippet); none for a PDF, whose pages have none."""
    return None if is_pdf_name(path) else heading or None


def _snippeted(hit: NoteHit, snippet: str, heading: str | None) -> NoteHit:
    """``hit`` with the snippet made for it after fusion, and that snippet's heading path."""
    return replace(hit, snippet=snippet, heading=_heading(hit.path, heading))


def _on_pages(
    reader: IndexReader, hits: list[NoteHit], words: list[str], *, rerank: bool
) -> list[NoteHit]:
    """PDF hits with the page they were found on: the best chunk's page (vectors), else the
    page holding the snippet, else the page with most of the query's words (the snippet is
    then made from that page). With ``rerank`` (a lexical ranking), a PDF counts the words
    its best single page holds, not those spread over its pages, and the hits are sorted
    again: a page is what the user reads."""
    paths = [hit.path for hit in hits if is_pdf_name(hit.path)]
    bodies = reader.bodies(paths)
    placed = []
    for hit in hits:
        body = bodies.get(hit.path)
        if body is None:
            placed.append(hit)
            continue
        pages = split_body(body)
        if hit.chunks:
            placed.append(replace(hit, page=hit.chunks[0].seq + 1))
            continue
        page = page_of_snippet(pages, hit.snippet)
        snippet = hit.snippet
        if page is None:
            page = page_of_words(pages, words)
            snippet = snippet_around(pages[page], words) if pages else ""
        score = _page_score(hit.score, pages, words) if rerank else hit.score
        placed.append(replace(hit, page=page + 1, snippet=snippet, score=score))
    if rerank:
        placed.sort(key=lambda hit: -hit.score)  # stable: ties keep the index's order
    return placed


def _page_score(score: float, pages: Sequence[str], words: Sequence[str]) -> float:
    """A lexical score (words matched + a BM25 fraction) with the words matched counted on
    the PDF's best page; never raised."""
    folded = [word.casefold() for word in words if word]
    if not folded:
        return score
    best = max((sum(word in page.casefold() for word in folded) for page in pages), default=0)
    whole = math.floor(score)
    return round(best + (score - whole), 6) if best < whole else score


def _sides(lexical: bool, semantic: bool) -> tuple[Side, ...]:
    found: list[Side] = []
    if lexical:
        found.append("lexical")
    if semantic:
        found.append("semantic")
    return tuple(found)


def _chunk_snippet(chunk: ChunkHit) -> str:
    text = " ".join(chunk.text.split())
    if len(text) > SNIPPET_CHARS:
        text = text[: SNIPPET_CHARS - 1].rstrip() + "…"
    return f"{chunk.heading}: {text}" if chunk.heading else text


def related_notes(
    reader: IndexReader, semantic: SemanticIndex, rel: str, limit: int = 10
) -> list[Related]:
    """The notes closest to the note at ``rel`` (not itself), each with its similarity and
    whether the two already link; [] while no vectors are ready or the note has none."""
    found = reader.note_chunks(rel)
    if found is None:
        return []
    vector = semantic.note_vector(found.hashes)
    if vector is None:
        return []
    chunks = [
        c
        for c in semantic.nearest_chunks(reader, vector, (limit + 1) * CHUNKS_PER_NOTE * 4)
        if c.note_id != found.note_id
    ]
    backlinks = set(reader.backlinks(rel))
    tags, links = reader.marks(found.note_id)
    related: list[Related] = []
    for p, hits in list(roll_up(chunks).items())[:limit]:
        their_tags, their_links = reader.marks(hits[0].note_id)
        own = link_forms(p) | link_forms(rel)  # a link to one another is not a shared one
        related.append(
            Related(
                p,
                hits[0].title,
                round(hits[0].score, 6),
                bool(link_forms(p) & found.links),
                p in backlinks,
                _chunk_snippet(hits[0]),
                hits[0].heading,
                tuple(sorted((links & their_links) - own, key=str.casefold)),
                tuple(sorted(tags & their_tags)),
            )
        )
    return related
