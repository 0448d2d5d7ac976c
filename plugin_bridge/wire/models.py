"""Wire models: the params and result of every method, notifications and server requests.

The single source of truth for the protocol: handlers validate params with these models, build
results with them, and ``python -m plugin_bridge schema`` generates docs/protocol.schema.json from
them. Field names are snake_case in Python and camelCase on the wire. Params refuse unknown
fields and do not coerce types (``"5"`` is not a number). Validators are built on first use
(``defer_build``), which keeps them off the server's start-up path.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

from plugin_bridge.wire.protocol import RequestId

ProviderName = Literal["anthropic", "openai", "ollama"]
ToolFormat = Literal["anthropic", "openai", "ollama", "lmstudio", "vllm"]
"""Tool formats: LM Studio and vLLM speak OpenAI's."""


class WireModel(BaseModel):
    """Base of results and notifications: camelCase on the wire."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        frozen=True,
        defer_build=True,
    )


class Params(WireModel):
    """Base of params: unknown fields are an error, no type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Empty(Params):
    """No params (or an empty object)."""


class EmptyResult(WireModel):
    """An empty object."""


# -- session -------------------------------------------------------------------------------


class ClientInfo(Params):
    name: str = Field(max_length=200, description="Client name, e.g. obsidian-ai-plugin.")
    version: str = Field(max_length=100)


class InitializeParams(Params):
    token: str = Field(max_length=1000, description="The token from the info file.")
    protocol_version: int = Field(description="Protocol version the client speaks (1).")
    client: ClientInfo


class ServerInfo(WireModel):
    name: str
    version: str


class Capabilities(WireModel):
    methods: list[str] = Field(description="Every method this server answers.")
    chat: bool = Field(description="A model provider is configured (chat and commands work).")


class EmbedderStatus(WireModel):
    model: str = Field(description="The configured embedder, e.g. ollama:nomic-embed-text.")
    chunks_embedded: int = Field(description="Chunks with a vector of that model.")
    ready: bool = Field(description="Semantic and hybrid search answer (else lexical).")
    phase: str = Field(description="The embedding job's phase, as in index/progress.")


class VaultInfo(WireModel):
    name: str
    note_count: int
    embedder: EmbedderStatus | None = Field(None, description="null: lexical search only.")


class InitializeResult(WireModel):
    protocol_version: int
    server: ServerInfo
    capabilities: Capabilities
    vault: VaultInfo


class IndexStatus(WireModel):
    notes: int = Field(description="Notes in the search index.")
    pending: int = Field(description="Files waiting to be indexed.")
    embedder: EmbedderStatus | None = Field(None, description="null: lexical search only.")


class HealthResult(WireModel):
    status: Literal["ok"]
    version: str
    provider: str | None = Field(description="anthropic, openai, ollama, or null without one.")
    model: str | None
    index: IndexStatus
    recommended_models: dict[str, list[str]]


class ModelsListParams(Params):
    refresh: bool = Field(False, description="Ask the provider now instead of the 24 h cache.")


class ModelInfoModel(WireModel):
    id: str
    display_name: str | None
    context_window: int | None
    max_output_tokens: int | None
    supports_tools: bool | None
    input_price_per_mtok: float | None = Field(description="USD; null when unknown, never 0.")
    output_price_per_mtok: float | None = Field(description="USD; null when unknown, never 0.")


class ModelsListResult(WireModel):
    models: list[ModelInfoModel]
    source: Literal["api", "cache", "catalog"] = Field(
        description="Asked now, from the 24 h cache, or the built-in list (provider unreachable)."
    )


# -- vault ---------------------------------------------------------------------------------


SearchMode = Literal["lexical", "semantic", "hybrid"]
MatchSide = Literal["lexical", "semantic"]


def _lexical() -> list[MatchSide]:
    return ["lexical"]


class SearchParams(Params):
    query: str = Field(
        max_length=1000,
        description='Words, "a phrase", prefix*, tag:x and path:folder filters.',
    )
    limit: int = Field(10, ge=1, le=50)
    mode: SearchMode | None = Field(
        None,
        description="Default: hybrid when vectors are ready, else lexical (also when semantic "
        "or hybrid is asked for before vectors exist).",
    )
    folder: str | None = Field(None, max_length=1000, description="Only notes inside it.")
    tag: str | None = Field(None, max_length=200, description="Only notes with it (or nested).")


class SearchHitModel(WireModel):
    path: str
    title: str
    score: float = Field(description="Higher is better (comparable within one answer only).")
    snippet: str = Field(
        description="Lexical: matched text, the matches wrapped in **…**; found by vectors: "
        "the best chunk, after its heading path."
    )
    matched_by: list[MatchSide] = Field(
        default_factory=_lexical, description="Which search found this note."
    )


class SearchResult(WireModel):
    results: list[SearchHitModel]
    took_ms: float
    pending: int = Field(description="Files not indexed yet (results may be partial).")
    mode: SearchMode = Field("lexical", description="The mode that answered.")


class NoteReadParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative path, e.g. Projects/Kafka.md.")


class NoteReadResult(WireModel):
    path: str
    content: str
    hash: str = Field(description="sha256 hex of the file bytes.")
    lossy: bool = Field(
        False,
        description=(
            "Some bytes were not UTF-8 and read as U+FFFD; only note/create with overwrite "
            "may write the note."
        ),
    )


HashField = Field(
    None,
    min_length=64,
    max_length=64,
    description="The sha256 the note had when read: the write fails with -32022 if it changed.",
)


class NoteCreateParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative .md path.")
    content: str = Field(max_length=5 * 1024 * 1024)
    overwrite: bool = False
    expected_hash: str | None = HashField


class NoteWriteResult(WireModel):
    path: str
    hash: str


class NoteAppendParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative .md path.")
    text: str = Field(min_length=1, max_length=5 * 1024 * 1024)
    expected_hash: str | None = HashField


class NoteEditModel(Params):
    old_text: str = Field(
        min_length=1, max_length=100_000, description="Must occur exactly once in the note."
    )
    new_text: str = Field(max_length=1_000_000)


class NoteEditParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative .md path.")
    edits: list[NoteEditModel] = Field(min_length=1, max_length=100)
    expected_hash: str = Field(
        min_length=64, max_length=64, description="The sha256 the note had when read."
    )


class NoteUndoParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative .md path.")


class NoteUndoResult(WireModel):
    path: str
    hash: str = Field(description="The note's sha256 after the undo; empty when it was removed.")
    removed: bool = Field(description="True when the undone write had created the note.")


class AuditListParams(Params):
    limit: int = Field(50, ge=1, le=1000)


class AuditEntry(WireModel):
    time: str
    path: str
    action: str
    old_hash: str | None
    new_hash: str | None
    origin: str


class AuditListResult(WireModel):
    entries: list[AuditEntry] = Field(description="Newest first.")


# -- chat ----------------------------------------------------------------------------------


class NoteContext(Params):
    note: str = Field(max_length=1000, description="Vault-relative path of the note.")
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
    text: str = Field(
        "", max_length=100_000, description="The message; may be empty only with promptId."
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

    @field_validator("text")
    @classmethod
    def _has_a_message(cls, text: str, info: ValidationInfo) -> str:
        if not text.strip() and info.data.get("prompt_id") is None:
            raise ValueError("must not be empty (unless promptId is given)")
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


class ChatClearParams(Params):
    conversation_id: str = Field(max_length=100)


# -- commands ------------------------------------------------------------------------------


class CreateNoteParams(Params):
    prompt: str = Field(min_length=1, max_length=20_000)
    folder: str = Field("", max_length=1000, description="Vault-relative folder; '' = root.")


class SearchSummarizeParams(Params):
    query: str = Field(min_length=1, max_length=1000)
    limit: int = Field(5, ge=1, le=20, description="How many top notes to read.")


class SearchSummarizeResult(WireModel):
    summary: str
    sources: list[str] = Field(description="Paths of the notes given to the model and cited.")


# -- tools ---------------------------------------------------------------------------------


class ToolsListParams(Params):
    format: ToolFormat | None = Field(
        None,
        description=(
            "Tool format; lmstudio and vllm are OpenAI's; default: the configured provider's, "
            "else anthropic."
        ),
    )


class ToolsListResult(WireModel):
    tools: list[dict[str, Any]]


class ToolCallParams(Params):
    name: str = Field(max_length=100)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolsExecuteParams(Params):
    calls: list[ToolCallParams] = Field(min_length=1, max_length=32)


class ToolExecution(WireModel):
    name: str
    is_error: bool
    content: str


class InvalidCall(WireModel):
    index: int
    name: str
    reason: str


class ToolsExecuteResult(WireModel):
    results: list[ToolExecution]
    invalid_calls: list[InvalidCall]


# -- notifications and server requests -----------------------------------------------------


class CancelRequestParams(Params):
    id: RequestId = Field(description="The id of the request to cancel.")


class ChatDelta(WireModel):
    request_id: RequestId
    text: str


class ChatToolCall(WireModel):
    request_id: RequestId
    id: str
    name: str
    arguments: dict[str, Any]


class ChatToolResult(WireModel):
    request_id: RequestId
    id: str
    is_error: bool
    content: str


class ToolConfirmParams(WireModel):
    tool: str
    arguments: dict[str, Any]
    preview: str | None = Field(None, description="Unified diff of a write, when known.")


class ToolConfirmResult(WireModel):
    approved: bool
    arguments: dict[str, Any] | None = Field(
        None,
        description=(
            "With approved: run the call with these arguments instead (the user kept only some "
            "hunks of the write); checked against the tool's schema like any call."
        ),
    )


def dump(model: BaseModel) -> dict[str, Any]:
    """``model`` as a JSON-ready dict with camelCase keys."""
    return model.model_dump(mode="json", by_alias=True)
