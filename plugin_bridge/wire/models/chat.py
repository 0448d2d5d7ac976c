"""Wire models of chat: chat/send and its context, chat/clear, the chat/* notifications.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

from pydantic import Field, ValidationInfo, field_validator

from plugin_bridge.wire.models.base import (
    ClientRequest,
    EmptyResult,
    Notification,
    Params,
    WireModel,
)
from plugin_bridge.wire.protocol import RequestId


class NoteContext(Params):
    note: str = Field(
        max_length=1000,
        description="Vault-relative path of the note, or of an image (png, jpg, gif, webp) or "
        "PDF, sent as itself to a model that can see it.",
    )
    selection: str | None = Field(
        None, max_length=100_000, description="The selected text; the whole note when absent."
    )


class FolderContext(Params):
    folder: str = Field(max_length=1000, description="A vault folder: its notes are listed.")


class TagContext(Params):
    tag: str = Field(min_length=1, max_length=200, description="A tag: its notes are listed.")


class ChatSendParams(Params):
    prompt_id: str | None = Field(
        None,
        max_length=1000,
        description="Run this custom prompt (prompts/list); text is added after it.",
    )
    setup: bool = Field(
        False,
        description="A turn of the setup conversation (Introduce yourself): the assistant asks "
        "about the vault and the user, and may call complete_setup to write the context note "
        "(reviewed with tool/confirm). Empty text starts it.",
    )
    text: str = Field(
        "",
        max_length=100_000,
        description="The message; may be empty only with promptId or setup.",
    )
    conversation_id: str | None = Field(
        None, max_length=100, description="Omit to start a new conversation."
    )
    purpose: Literal["chat", "deep"] = Field(
        "chat", description="deep: this turn uses the deep model, when one is configured."
    )
    context: list[NoteContext | FolderContext | TagContext] = Field(
        default_factory=list,
        max_length=20,
        description="What the user is looking at or @-mentioned, sent with this message only.",
    )
    model: str | None = Field(
        None,
        max_length=300,
        description="Run this turn on this model (a models/list id of the chat provider, or "
        "provider:model): the panel's model switcher; null: the purpose's model.",
    )

    @field_validator("text")
    @classmethod
    def _has_a_message(cls, text: str, info: ValidationInfo) -> str:
        if not text.strip() and info.data.get("prompt_id") is None and not info.data.get("setup"):
            raise ValueError("must not be empty (unless promptId or setup is given)")
        return text


class UsageModel(WireModel):
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


class ChatSendResult(WireModel):
    conversation_id: str
    text: str
    stop_reason: str = Field(
        description="end_turn, max_tokens, stop_sequence, max_tool_iterations or refusal."
    )
    usage: UsageModel
    cost_usd: float | None = Field(description="Null when the model's price is unknown.")
    sources: list[str] = Field(
        default_factory=list,
        description="Notes the model was given (context) or read during the turn, in order.",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="One sentence each: what of the message was not sent (images to a model "
        "that cannot see them, images past the limit of 8).",
    )
    model: str = Field("", description="The model that answered this turn.")
    provider: str = Field("", description="Its provider's name (empty for a scripted one).")


class ChatClearParams(Params):
    conversation_id: str = Field(max_length=100)


class ChatDelta(Notification):
    METHOD: ClassVar[str] = "chat/delta"
    request_id: RequestId
    text: str


class ChatToolCall(Notification):
    METHOD: ClassVar[str] = "chat/toolCall"
    request_id: RequestId
    id: str
    name: str
    arguments: dict[str, Any]


class ChatToolResult(Notification):
    METHOD: ClassVar[str] = "chat/toolResult"
    request_id: RequestId
    id: str
    is_error: bool
    content: str


CHAT_SEND: Final = ClientRequest("chat/send", ChatSendParams, ChatSendResult)
CHAT_CLEAR: Final = ClientRequest("chat/clear", ChatClearParams, EmptyResult)
