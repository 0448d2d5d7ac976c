"""Wire models of what the assistant keeps: stored conversations, usage and budgets, custom
prompts. Same rules as :mod:`plugin_bridge.wire.models` (camelCase on the wire, params strict)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from plugin_bridge.wire.models import Params, WireModel

# -- conversations ---------------------------------------------------------------------------


class ConversationsListParams(Params):
    limit: int = Field(20, ge=1, le=100)
    cursor: str | None = Field(
        None, max_length=200, description="nextCursor of the previous page; omit for the first."
    )


class ConversationSummary(WireModel):
    id: str
    title: str = Field(description="The first words of the opening question, or as renamed.")
    created_at: str = Field(description="ISO 8601, UTC.")
    updated_at: str = Field(description="ISO 8601, UTC: when its last turn completed.")
    model: str | None


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


# -- usage and budgets -----------------------------------------------------------------------


class BudgetWarning(WireModel):
    """Notification: the calls just made passed 80 % of a budget."""

    period: Literal["day", "month"]
    spent_usd: float
    budget_usd: float


class ModelUsageModel(WireModel):
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None = Field(description="Null when no call of this model had a price.")
    unpriced_calls: int = Field(description="Calls whose model has no known price.")


class PeriodUsage(WireModel):
    cost_usd: float | None = Field(
        description="Sum of the priced calls; null when every call had an unknown price."
    )
    budget_usd: float | None
    unpriced_calls: int
    by_model: list[ModelUsageModel]


class UsageSummaryResult(WireModel):
    today: PeriodUsage
    month: PeriodUsage


# -- custom prompts --------------------------------------------------------------------------


class PromptModel(WireModel):
    id: str = Field(description="The prompt note's path: pass it as chat/send promptId.")
    name: str
    description: str
    insert: Literal["selection", "note", "none"] = Field(
        description="What the client should send as context with it."
    )
    purpose: Literal["chat", "fast", "deep"] | None = Field(
        description="The model that runs it (front matter purpose); null: the one asked for."
    )


class PromptsListResult(WireModel):
    prompts: list[PromptModel]


# -- settings --------------------------------------------------------------------------------


class ModelsByPurpose(WireModel):
    chat: str | None = Field(description="Conversations (the default).")
    fast: str | None = Field(description="Small jobs such as titles; the chat model when null.")
    deep: str | None = Field(description="For the hardest questions; the chat model when null.")


class KeysModel(WireModel):
    anthropic: str | None = Field(description="Masked; null when not set.")
    openai: str | None = Field(description="Masked; null when not set.")


class SettingsResult(WireModel):
    provider: Literal["anthropic", "openai", "ollama"] | None
    base_url: str | None
    models: ModelsByPurpose
    daily_budget_usd: float | None
    monthly_budget_usd: float | None
    keys: KeysModel
    exclude: list[str] = Field(description="Folders and globs the assistant never sees.")
    max_tokens: int = Field(description="The most tokens of one answer (the model's cap wins).")
    temperature: float | None = Field(description="Sampling temperature; null: the API's default.")
    timeout: float | None = Field(description="Seconds per provider request; null: its default.")
    context_note: str = Field(description="The note that is every conversation's context.")
    prompts_folder: str = Field(description="The folder whose notes are the custom prompts.")
    conversations_folder: str | None = Field(
        description="Where each conversation is kept as a note, updated every turn; null: off."
    )
    embedder: str | None = Field(
        None, description="ollama:MODEL, openai:MODEL or model2vec:PATH; null: lexical only."
    )
    embedder_base_url: str | None = None
    config_file: str = Field(description="Where settings/update saves them.")


class ModelsUpdate(Params):
    chat: str | None = Field(None, max_length=200)
    fast: str | None = Field(None, max_length=200)
    deep: str | None = Field(None, max_length=200)


class SettingsUpdateParams(Params):
    provider: Literal["anthropic", "openai", "ollama"] | None = None
    base_url: str | None = Field(None, max_length=2000)
    models: ModelsUpdate | None = None
    daily_budget_usd: float | None = Field(None, gt=0)
    monthly_budget_usd: float | None = Field(None, gt=0)
    anthropic_api_key: str | None = Field(None, max_length=500, description="Write-only.")
    openai_api_key: str | None = Field(None, max_length=500, description="Write-only.")
    exclude: list[str] | None = Field(
        None,
        max_length=200,
        description="Folders (Archive) and globs (*.excalidraw.md); applied without a rebuild.",
    )
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float | None = Field(None, gt=0, le=3600)
    context_note: str | None = Field(None, min_length=1, max_length=1000)
    prompts_folder: str | None = Field(None, min_length=1, max_length=1000)
    conversations_folder: str | None = Field(
        None, min_length=1, max_length=1000, description="A vault folder; null turns it off."
    )
    embedder: str | None = Field(
        None,
        max_length=1000,
        description="Switch semantic search to this embedder (the old one serves until the new "
        "vectors are ready); null: lexical search only.",
    )
    embedder_base_url: str | None = Field(None, max_length=2000)
