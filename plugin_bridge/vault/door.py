"""The vault's doors off the event loop (:class:`llm_service.door.Door`): the search index has
one for its read connection (a search's FTS5 query, vector search, chunk reads and snippets run
there in one hop), the embedding job one for its store and vectors, and :data:`FILES` is the
one for the notes' files (reads, PDFs, the audit log, the vault folder's stats; the note store's
``execute`` runs there too)."""

from __future__ import annotations

from typing import Final

from llm_service.door import Door

FILES: Final = Door("vault-files", threads=4)
"""Blocking work on the notes' files, shared by every vault of the process."""
