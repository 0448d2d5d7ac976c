"""Wire models of stored conversations: conversations/list, get, rename, export.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field

from plugin_bridge.wire.models.base import ClientRequest, EmptyResult, Params, WireModel
from plugin_bridge.wire.models.vault import NoteWriteResult


class ConversationsListParams(Params):
    limit: int = Field(20, ge=1, le=100)
    cursor: str | None = Field(
        None, max_length=200, description="nextCursor of the previous page; omit for the first."
    )
    query: str | None = Field(
        None,
        max_length=200,
        description="Only conversations whose title or messages contain these words (any case).",
    )


class ConversationSummary(WireModel):
    id: str
    title: str = Field(description="The first words of the opening question, or as renamed.")
    created_at: str = Field(description="ISO 8601, UTC.")
    updated_at: str = Field(description="ISO 8601, UTC: when its last turn completed.")
    model: str | None
    origin: str = Field(
        "owner",
        description="Where it came from: owner (the panel, the CLI), key:NAME (a client key), "
        "telegram:USER_ID or discord:USER_ID (a chat-app bot's user).",
    )


class ConversationsListResult(WireModel):
    conversations: list[ConversationSummary] = Field(description="Newest first.")
    next_cursor: str | None


class ConversationIdParams(Params):
    id: str = Field(min_length=1, max_length=100)


class StoredMessage(WireModel):
    role: Literal["user", "assistant"]
    content: list[dict[str, Any]] = Field(
        description=(
            "Blocks: {type: text, text} | {type: tool_use, id, name, arguments} | "
            "{type: tool_result, toolCallId, content, isError}."
        )
    )


class ConversationResult(ConversationSummary):
    messages: list[StoredMessage] = Field(description="The whole transcript, oldest first.")


class ConversationsRenameParams(Params):
    id: str = Field(min_length=1, max_length=100)
    title: str = Field(min_length=1, max_length=200)


class ConversationsExportParams(Params):
    id: str = Field(min_length=1, max_length=100)
    folder: str = Field(
        "Assistant/Conversations",
        max_length=1000,
        description="Vault folder of the new note; the title names it (never overwriting).",
    )


CONVERSATIONS_LIST: Final = ClientRequest(
    "conversations/list", ConversationsListParams, ConversationsListResult
)
CONVERSATIONS_GET: Final = ClientRequest(
    "conversations/get", ConversationIdParams, ConversationResult
)
CONVERSATIONS_RENAME: Final = ClientRequest(
    "conversations/rename", ConversationsRenameParams, EmptyResult
)
CONVERSATIONS_DELETE: Final = ClientRequest(
    "conversations/delete", ConversationIdParams, EmptyResult
)
CONVERSATIONS_EXPORT: Final = ClientRequest(
    "conversations/export", ConversationsExportParams, NoteWriteResult
)
