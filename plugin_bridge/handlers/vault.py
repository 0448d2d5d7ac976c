"""Vault methods: vault/search, note/read, note/create (writes by the user: origin "user")."""

from __future__ import annotations

import asyncio

from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.wire.models import (
    NoteCreateParams,
    NoteReadParams,
    NoteReadResult,
    NoteWriteResult,
    SearchHitModel,
    SearchParams,
    SearchResult,
)


async def search(ctx: Context, params: SearchParams) -> SearchResult:
    """Full-text search (answers from what is indexed so far; pending says how much is not)."""
    found = ctx.app.vault.index.search(params.query, params.limit)
    return SearchResult(
        results=[
            SearchHitModel(path=h.path, title=h.title, score=h.score, snippet=h.snippet)
            for h in found.hits
        ],
        took_ms=found.took_ms,
        pending=found.pending,
    )


async def read_note(ctx: Context, params: NoteReadParams) -> NoteReadResult:
    """A note's text and the sha256 of its bytes."""
    note = await asyncio.to_thread(ctx.app.vault.notes.read, params.path)
    return NoteReadResult(path=note.path, content=note.content, hash=note.hash, lossy=note.lossy)


async def create_note(ctx: Context, params: NoteCreateParams) -> NoteWriteResult:
    """Create a note atomically; an existing one only with overwrite."""
    written = await asyncio.to_thread(
        ctx.app.vault.notes.create,
        params.path,
        params.content,
        overwrite=params.overwrite,
        origin="user",
    )
    return NoteWriteResult(path=written.path, hash=written.hash)


def register(router: AppRouter) -> None:
    router.register("vault/search", SearchParams, search)
    router.register("note/read", NoteReadParams, read_note)
    router.register("note/create", NoteCreateParams, create_note)
