"""Stored conversations: conversations/list, get, rename, delete and export."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from llm_service.messages import message_to_dict
from plugin_bridge.app.conversations.live import unknown
from plugin_bridge.app.conversations.store import ConversationRow
from plugin_bridge.app.conversations.transcripts import save_unique, transcript
from plugin_bridge.handlers.context import AppRouter, Context, caller_of
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import (
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


async def list_conversations(
    ctx: Context, params: ConversationsListParams
) -> ConversationsListResult:
    """Stored conversations, newest first, a page at a time; with a query, only those whose
    title or text contain its words."""
    store = await ctx.app.conversations.stored()
    caller = caller_of(ctx)
    client = None if caller.is_owner else caller.label
    try:
        rows, next_cursor = await asyncio.to_thread(
            store.page, params.limit, params.cursor, params.query, client
        )
    except ValueError as exc:
        raise RpcError(WireCode.INVALID_PARAMS, "Invalid cursor: pass a nextCursor.") from exc
    return ConversationsListResult(
        conversations=[_summary(row) for row in rows], next_cursor=next_cursor
    )


async def check_own(ctx: Context, conversation_id: str) -> None:
    """A client key reaches its own conversations only: another's is unknown to it."""
    await ctx.app.conversations.check_owner(conversation_id, caller_of(ctx))


async def get_conversation(ctx: Context, params: ConversationIdParams) -> ConversationResult:
    """One stored conversation with its whole transcript, tool calls and results included."""
    await check_own(ctx, params.id)
    store = await ctx.app.conversations.stored()
    row = await asyncio.to_thread(store.get, params.id)
    if row is None:
        raise unknown(params.id)
    messages = await asyncio.to_thread(store.messages, params.id)
    return ConversationResult(
        **_summary(row).model_dump(),
        messages=[StoredMessage.model_validate(message_to_dict(m)) for m in messages],
    )


async def rename_conversation(ctx: Context, params: ConversationsRenameParams) -> EmptyResult:
    """Give a stored conversation a title of the user's choosing."""
    await check_own(ctx, params.id)
    store = await ctx.app.conversations.stored()
    if not await asyncio.to_thread(store.rename, params.id, params.title):
        raise unknown(params.id)
    return EmptyResult()


async def delete_conversation(ctx: Context, params: ConversationIdParams) -> EmptyResult:
    """Delete a stored conversation and its messages for good."""
    await check_own(ctx, params.id)
    conversations = ctx.app.conversations
    store = await conversations.stored()
    if not await asyncio.to_thread(store.delete, params.id):
        raise unknown(params.id)
    conversations.forget(params.id)
    return EmptyResult()


async def export_conversation(ctx: Context, params: ConversationsExportParams) -> NoteWriteResult:
    """Save a conversation as a Markdown note in the vault (a new note, never overwriting)."""
    await check_own(ctx, params.id)
    app = ctx.app
    store = await app.conversations.stored()
    row = await asyncio.to_thread(store.get, params.id)
    if row is None:
        raise unknown(params.id)
    messages = await asyncio.to_thread(store.messages, params.id)
    notes, body = app.vault.notes, transcript(messages)
    written = await asyncio.to_thread(
        save_unique, notes, params.folder, row.title, body, origin="user"
    )
    return NoteWriteResult(path=written.path, hash=written.hash)


def _summary(row: ConversationRow) -> ConversationSummary:
    return ConversationSummary(
        id=row.id,
        title=row.title,
        created_at=_iso(row.created_at),
        updated_at=_iso(row.updated_at),
        model=row.model,
    )


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def register(router: AppRouter) -> None:
    router.register("conversations/list", ConversationsListParams, list_conversations)
    router.register("conversations/get", ConversationIdParams, get_conversation)
    router.register("conversations/rename", ConversationsRenameParams, rename_conversation)
    router.register("conversations/delete", ConversationIdParams, delete_conversation)
    router.register("conversations/export", ConversationsExportParams, export_conversation)
