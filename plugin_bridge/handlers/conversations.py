"""Stored conversations: conversations/list, get, rename, delete and export."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

from llm_service.messages import message_to_dict
from plugin_bridge.app.conversations.live import unknown
from plugin_bridge.app.conversations.store import ConversationRow, ConversationStore
from plugin_bridge.app.conversations.transcripts import save_unique, transcript
from plugin_bridge.handlers.context import AppRouter, Context, caller_of
from plugin_bridge.vault.notes.store import WriteResult
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import (
    CONVERSATIONS_DELETE,
    CONVERSATIONS_EXPORT,
    CONVERSATIONS_GET,
    CONVERSATIONS_LIST,
    CONVERSATIONS_RENAME,
    ConversationIdParams,
    ConversationResult,
    ConversationsExportParams,
    ConversationsListParams,
    ConversationsListResult,
    ConversationsRenameParams,
    ConversationSummary,
    EmptyResult,
    NoteWriteResult,
    StoredMessage,
)

_T = TypeVar("_T")


async def list_conversations(
    ctx: Context, params: ConversationsListParams
) -> ConversationsListResult:
    """Stored conversations, newest first, a page at a time; with a query, only those whose
    title or text contain its words."""
    store = await ctx.app.conversations.stored()
    caller = caller_of(ctx)
    client = None if caller.is_owner else caller.label
    try:
        rows, next_cursor = await store.execute(
            lambda store: store.page(params.limit, params.cursor, params.query, client)
        )
    except ValueError as exc:
        raise RpcError(WireCode.INVALID_PARAMS, "Invalid cursor: pass a nextCursor.") from exc
    return ConversationsListResult(
        conversations=[_summary(row) for row in rows], next_cursor=next_cursor
    )


async def check_own(ctx: Context, conversation_id: str) -> None:
    """A client key reaches its own conversations only: another's is unknown to it."""
    if not caller_of(ctx).is_owner:
        await _owned(ctx, conversation_id, lambda store: None)


async def _owned(ctx: Context, conversation_id: str, work: Callable[[ConversationStore], _T]) -> _T:
    """``work(store)`` once the caller may reach conversation ``conversation_id`` (see
    :func:`check_own`), both in one hop to the store."""
    caller = caller_of(ctx)

    def checked(store: ConversationStore) -> _T:
        if not caller.is_owner and store.client_of(conversation_id) not in (None, caller.label):
            raise unknown(conversation_id)
        return work(store)

    store = await ctx.app.conversations.stored()
    return await store.execute(checked)


async def get_conversation(ctx: Context, params: ConversationIdParams) -> ConversationResult:
    """One stored conversation with its whole transcript, tool calls and results included."""
    row, messages = await _owned(
        ctx, params.id, lambda store: (store.get(params.id), store.messages(params.id))
    )
    if row is None:
        raise unknown(params.id)
    return ConversationResult(
        **_summary(row).model_dump(),
        messages=[StoredMessage.model_validate(message_to_dict(m)) for m in messages],
    )


async def rename_conversation(ctx: Context, params: ConversationsRenameParams) -> EmptyResult:
    """Give a stored conversation a title of the user's choosing."""
    if not await _owned(ctx, params.id, lambda store: store.rename(params.id, params.title)):
        raise unknown(params.id)
    return EmptyResult()


async def delete_conversation(ctx: Context, params: ConversationIdParams) -> EmptyResult:
    """Delete a stored conversation and its messages for good."""
    if not await _owned(ctx, params.id, lambda store: store.delete(params.id)):
        raise unknown(params.id)
    ctx.app.conversations.forget(params.id)
    return EmptyResult()


async def export_conversation(ctx: Context, params: ConversationsExportParams) -> NoteWriteResult:
    """Save a conversation as a Markdown note in the vault (a new note, never overwriting)."""
    notes = ctx.app.vault.notes

    def export(store: ConversationStore) -> WriteResult:
        row = store.get(params.id)
        if row is None:
            raise unknown(params.id)
        body = transcript(store.messages(params.id))
        return save_unique(notes, params.folder, row.title, body, origin="user")

    written = await _owned(ctx, params.id, export)
    return NoteWriteResult(path=written.path, hash=written.hash)


def _summary(row: ConversationRow) -> ConversationSummary:
    return ConversationSummary(
        id=row.id,
        title=row.title,
        created_at=_iso(row.created_at),
        updated_at=_iso(row.updated_at),
        model=row.model,
        origin=row.client,
    )


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def register(router: AppRouter) -> None:
    router.register(CONVERSATIONS_LIST, list_conversations)
    router.register(CONVERSATIONS_GET, get_conversation)
    router.register(CONVERSATIONS_RENAME, rename_conversation)
    router.register(CONVERSATIONS_DELETE, delete_conversation)
    router.register(CONVERSATIONS_EXPORT, export_conversation)
