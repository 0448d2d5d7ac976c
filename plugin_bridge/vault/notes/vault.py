"""One vault: its note store, its live search index, and where its state lives."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from plugin_bridge.vault.datadir import default_data_dir
from plugin_bridge.vault.lexical.index import SearchIndex
from plugin_bridge.vault.notes.atomic import ORPHAN_AGE_SECONDS, remove_orphans
from plugin_bridge.vault.notes.store import NoteStore
from plugin_bridge.vault.semantic.semantic_index import SemanticIndex

if TYPE_CHECKING:
    from llm_service.embedders import Embedder
    from plugin_bridge.vault.semantic.semantic_index import SemanticIndex

INDEX_FILE = "index.sqlite3"
logger = logging.getLogger(__name__)


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
        removed = await asyncio.to_thread(remove_orphans, self.root, self.notes.files.ignored, age)
        if removed:
            logger.info("Removed %d temp files left by an interrupted write.", removed)
        if sole_writer:
            notes = self.notes
            recovered = await asyncio.to_thread(
                notes.asked.recover, notes.snapshots, notes.audit, notes.file_hash
            )
            if recovered:
                logger.info("Recorded %d writes Obsidian made before a crash.", recovered)
        await self.index.start()
        self._indexing = True
        if self.semantic is not None:
            await self.semantic.start()

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
