"""Search methods: vault/search (lexical, semantic, hybrid), vault/related and
index/confirmEmbedding."""

from __future__ import annotations

from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import (
    INDEX_CONFIRM_EMBEDDING,
    VAULT_RELATED,
    VAULT_SEARCH,
    ConfirmEmbeddingResult,
    EmbedderStatus,
    Empty,
    RelatedNote,
    RelatedParams,
    RelatedResult,
    SearchHitModel,
    SearchParams,
    SearchResult,
)


async def search(ctx: Context, params: SearchParams) -> SearchResult:
    """Lexical, semantic or hybrid search (answers from what is indexed and embedded so far;
    pending says how many files are not indexed yet)."""
    # a folder outside the vault, hidden or a system folder is refused (-32023)
    found = await ctx.app.vault.search(
        params.query, params.limit, params.mode, params.folder, params.tag
    )
    return SearchResult(
        results=[SearchHitModel.model_validate(h, from_attributes=True) for h in found.hits],
        took_ms=found.took_ms,
        pending=found.pending,
        mode=found.mode,
    )


async def related(ctx: Context, params: RelatedParams) -> RelatedResult:
    """The notes closest in meaning to one note, with whether they already link."""
    found = await ctx.app.vault.related(params.path, params.limit)  # refused or missing note
    return RelatedResult(
        results=[
            RelatedNote(
                path=r.path,
                title=r.title,
                score=r.score,
                links_to=r.links_to,
                linked_from=r.linked_from,
                snippet=r.snippet,
                heading=r.heading,
                shared_links=list(r.shared_links),
                shared_tags=list(r.shared_tags),
            )
            for r in found.notes
        ],
        ready=found.ready,
    )


async def confirm_embedding(ctx: Context, params: Empty) -> ConfirmEmbeddingResult:
    """Approve the paid embedding that index/progress (phase confirm) announced."""
    semantic = ctx.app.vault.semantic
    if semantic is None:
        raise RpcError(
            WireCode.INVALID_PARAMS, "No embedder is configured: start serve with --embedder."
        )
    waiting = semantic.progress.phase == "confirm"
    semantic.approve()
    return ConfirmEmbeddingResult(waiting=waiting)


def embedder_status(vault: Vault) -> EmbedderStatus | None:
    """What health and initialize say about semantic search (None: lexical only)."""
    semantic = vault.semantic
    if semantic is None:
        return None
    return EmbedderStatus(
        model=semantic.model_id,
        chunks_embedded=semantic.chunks_embedded,
        ready=semantic.ready,
        phase=semantic.progress.phase,
    )


def register(router: AppRouter) -> None:
    router.register(VAULT_SEARCH, search)
    router.register(VAULT_RELATED, related)
    router.register(INDEX_CONFIRM_EMBEDDING, confirm_embedding)
