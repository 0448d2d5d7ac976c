"""Wire models of the settings: settings/get and settings/update.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from pydantic import Field

from llm_service.factory import ProviderName
from plugin_bridge.wire.models.base import Params, WireModel


class ModelsByPurpose(WireModel):
    chat: str | None = Field(description="Conversations (the default).")
    fast: str | None = Field(description="Small jobs such as titles; the chat model when null.")
    deep: str | None = Field(description="For the hardest questions; the chat model when null.")


class KeysModel(WireModel):
    anthropic: str | None = Field(description="Masked; null when not set.")
    openai: str | None = Field(description="Masked; null when not set.")


class SettingsResult(WireModel):
    provider: ProviderName | None
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
    provider: ProviderName | None = None
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
