"""One vault: its note store, its live search index, where its state lives, and its one search
API (:meth:`Vault.search`, :meth:`Vault.related`).

A search parses its query once, awaits the query's embedding (when vectors answer), then runs
whole on the index's read door: the folder check, FTS5, the vector search, the chunk reads,
snippets and PDF pages, in one hop off the event loop (``door.py``).
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from llm_service.door import Args, Out
from llm_service.errors import LLMError
from plugin_bridge.vault.datadir import default_data_dir
from plugin_bridge.vault.door import FILES
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.index import SearchIndex
from plugin_bridge.vault.lexical.listing import (
    DEFAULT_PAGE,
    ListedNote,
    NotesPage,
    files_listing,
    listing_page,
    notes_page,
)
from plugin_bridge.vault.lexical.operators import unsupported
from plugin_bridge.vault.lexical.query import Query, parse_query
from plugin_bridge.vault.lexical.reader import IndexReader
from plugin_bridge.vault.notes.atomic import ORPHAN_AGE_SECONDS, remove_orphans
from plugin_bridge.vault.notes.store import NoteStore
from plugin_bridge.vault.paths import to_posix
from plugin_bridge.vault.semantic.hybrid import (
    Mode,
    NoteHit,
    NoteResults,
    Related,
    related_notes,
    search_notes,
)
from plugin_bridge.vault.semantic.semantic_index import SemanticIndex

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from llm_service.embedders import Embedder

__all__ = ["Mode", "NoteHit", "NoteResults", "Related", "RelatedNotes", "Vault"]

INDEX_FILE = "index.sqlite3"
LISTING_SECONDS: Final = 2.0
"""How long the file system's list of notes is reused while the first indexing runs."""
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RelatedNotes:
    """What :meth:`Vault.related` found for the note at ``path``."""

    path: str
    """The note asked about, as the vault spells it."""
    notes: list[Related]
    ready: bool
    """False while no vectors answer (no embedder, not embedded yet, the index rebuilt)."""


class Vault:
    """The notes and the search index of the vault folder at ``root``.

    State (index, undo snapshots, audit log) goes to ``data_dir``, by default a per-vault folder
    outside the vault; a data dir inside the vault is never read, written or indexed as notes.
    While the index runs (between ``start`` and ``close``), writes made through ``notes`` are
    searchable as soon as they return.
    """

    def __init__(
        self,
        root: Path,
        data_dir: Path | None = None,
        *,
        watch: bool = True,
        exclude: Sequence[str] = (),
    ) -> None:
        if not root.is_dir():
            raise ValueError(
                f"The vault folder {root} does not exist or is not a folder: "
                "give the path of an existing folder."
            )
        self.root = root.resolve()
        self.data_dir = (
            data_dir if data_dir is not None else default_data_dir(self.root)
        ).resolve()
        self.name = self.root.name
        self.index = SearchIndex(
            self.root,
            self.data_dir / INDEX_FILE,
            watch=watch,
            excluded=frozenset({self.data_dir}),
        )
        self.notes = NoteStore(self.root, self.data_dir, on_write=self._written)
        self._indexing = False
        self.semantic: SemanticIndex | None = None
        """Vectors for semantic and hybrid search; None without an embedder (lexical only)."""
        self._listing: tuple[float, list[ListedNote]] | None = None
        """The file system's notes while the first indexing runs, and when they were read."""
        self._whole = False
        """The index lists every note (its first indexing is done)."""
        self.set_scope(exclude)

    def use_embedder(self, embedder: Embedder, **options: Any) -> SemanticIndex:
        """Keep vectors of every chunk with ``embedder`` (call before ``start``); ``options``
        go to :class:`SemanticIndex` (progress and spend callbacks, the confirmation limit)."""
        self.semantic = SemanticIndex(self.index, embedder, **options)
        return self.semantic

    @property
    def exclude(self) -> tuple[str, ...]:
        """The user's excluded folders and globs (see :class:`VaultFiles`)."""
        return self.notes.files.scope

    def set_pdf_limit(self, max_bytes: int) -> None:
        """PDFs larger than ``max_bytes`` are neither indexed nor read (call before start)."""
        self.notes.files.pdf_max_bytes = self.index.files.pdf_max_bytes = max_bytes

    def set_scope(self, exclude: Sequence[str]) -> None:
        """Exclude these folders and globs from now on, for search, the tools and the watcher:
        the index drops what is now excluded and adds what is now included, without a rebuild
        (an incremental scan)."""
        self.notes.files.scope = self.index.files.scope = tuple(exclude)
        if self._indexing:
            self.index.rescan()

    async def start(self, *, sole_writer: bool = False) -> None:
        """Remove temp files left by killed writes, open the index and return; the first
        indexing continues in the background. ``sole_writer``: this process holds the vault's
        lock (``serve``), so every temp file is a killed write's, whatever its age (else only
        those older than a minute: another process may be writing)."""
        age = 0.0 if sole_writer else ORPHAN_AGE_SECONDS
        await self.run(self._tidy, age, sole_writer=sole_writer)
        await self.index.start()
        self._indexing = True
        if self.semantic is not None:
            await self.semantic.start()

    def _tidy(self, age: float, *, sole_writer: bool) -> None:
        removed = remove_orphans(self.root, self.notes.files.ignored, age)
        if removed:
            logger.info("Removed %d temp files left by an interrupted write.", removed)
        if sole_writer:
            notes = self.notes
            recovered = notes.asked.recover(notes.snapshots, notes.audit, notes.file_hash)
            if recovered:
                logger.info("Recorded %d writes Obsidian made before a crash.", recovered)

    # -- the vault's doors ----------------------------------------------------------------------

    async def run(self, fn: Callable[Args, Out], *args: Args.args, **kwargs: Args.kwargs) -> Out:
        """``fn(*args, **kwargs)``, blocking work on the notes' files (``notes``' methods, PDF
        reads, the audit log), on the vault's file door: how async code calls them."""
        return await FILES.run(fn, *args, **kwargs)

    # -- search -----------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        limit: int = 10,
        mode: Mode | None = None,
        folder: str | None = None,
        tag: str | None = None,
    ) -> NoteResults:
        """The best ``limit`` notes for ``query`` (any string; see ``lexical/query.py``; an
        operator the index cannot answer, such as ``line:``, is VaultError invalid_query), inside
        ``folder`` (VaultError forbidden_path when it is not one of the vault's) and with
        ``tag`` when given. ``mode`` defaults to hybrid when vectors are ready, else lexical
        (also when semantic or hybrid is asked for before vectors exist). Answers from what is
        indexed and embedded so far; ``pending`` says how many files are not indexed yet."""
        started = time.perf_counter()
        parsed = parse_query(query)
        if parsed.unsupported:
            raise VaultError("invalid_query", unsupported(parsed.unsupported))
        semantic = self.semantic
        usable = semantic is not None and semantic.ready and bool(parsed.match or parsed.cjk)
        chosen: Mode = (mode or "hybrid") if usable else "lexical"
        vector = None
        if chosen != "lexical":
            assert semantic is not None
            try:
                vector = await semantic.query_vector(parsed.text)
            except LLMError as exc:  # the embedder went away: words still find notes
                logger.warning("Semantic search failed (%s); answering lexically.", exc)
                chosen = "lexical"
        find = functools.partial(self._search, parsed, limit, chosen, vector, folder, tag)
        try:
            hits, chosen = await self.index.execute(find)
        except sqlite3.Error:  # a damaged index being rebuilt: it answers again once done
            hits = []
        took = round((time.perf_counter() - started) * 1000, 3)
        return NoteResults(hits, chosen, self.index.pending, took)

    def _search(
        self,
        parsed: Query,
        limit: int,
        mode: Mode,
        vector: npt.NDArray[np.float32] | None,
        folder: str | None,
        tag: str | None,
        reader: IndexReader,
    ) -> tuple[list[NoteHit], Mode]:
        """A search, whole, on the index's read door."""
        if folder:
            folder = self.notes.folder_rel(folder)
        query = self.index.filtered(parsed, folder, tag)
        semantic = self.semantic if mode != "lexical" else None
        return search_notes(reader, semantic, query, limit, mode, vector)

    async def related(self, path: str, limit: int = 10) -> RelatedNotes:
        """The notes closest in meaning to the note at ``path`` (VaultError when it is not a
        readable note), each with whether the two already link."""
        try:
            return await self.index.execute(functools.partial(self._related, path, limit))
        except sqlite3.Error:  # a damaged index being rebuilt
            return RelatedNotes(to_posix(path), [], ready=False)

    def _related(self, path: str, limit: int, reader: IndexReader) -> RelatedNotes:
        rel = self.notes.info(path).path
        semantic = self.semantic
        if semantic is None or not semantic.ready:
            return RelatedNotes(rel, [], ready=False)
        return RelatedNotes(rel, related_notes(reader, semantic, rel, limit), ready=True)

    async def notes_page(self, cursor: str | None, limit: int = DEFAULT_PAGE) -> NotesPage:
        """The notes a page at a time (see ``lexical/listing.py``): the index's, with titles;
        until the first indexing is done, the file system's (read again at most every
        :data:`LISTING_SECONDS`), so a client that lists at once sees every note."""
        if not self.listed_whole:
            listed = self._listing
            if listed is None or time.monotonic() - listed[0] > LISTING_SECONDS:
                listed = time.monotonic(), await self.run(files_listing, self.index.files)
                self._listing = listed
            return listing_page(listed[1], cursor, limit)
        return await self.index.execute(lambda reader: notes_page(reader, cursor, limit))

    @property
    def listed_whole(self) -> bool:
        """Whether the index lists every note (its first indexing is done); stays true."""
        if not self._whole and self.index.idle:
            self._whole, self._listing = True, None
        return self._whole

    async def close(self) -> None:
        """Stop the watcher and the indexer; the note store stays usable."""
        self._indexing = False
        if self.semantic is not None:
            await self.semantic.close()
        await self.index.close()

    async def __aenter__(self) -> Vault:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    def _written(self, rel_path: str) -> None:
        # Without a running indexer nobody would pick the change up: the next start's scan will.
        if self._indexing:
            self.index.notify_changed(rel_path)
