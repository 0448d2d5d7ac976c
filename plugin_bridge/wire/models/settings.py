"""Wire models of the settings: settings/get and settings/update.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict. The
fields spelled per provider (``baseUrls``, ``keys``, ``NAMEApiKey``) are declared here, one per
provider (``llm_service.profiles.PROVIDER_NAMES``) or per keyed provider (``KEYED``); a test
fails until a new profile row's fields are added.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field, StringConstraints

from llm_service.profiles import ProviderName
from plugin_bridge.wire.models.base import ClientRequest, Empty, Params, ServerRequest, WireModel


class ModelsByPurpose(WireModel):
    chat: str | None = Field(description="Conversations (the default).")
    fast: str | None = Field(description="Small jobs such as titles; the chat model when null.")
    deep: str | None = Field(description="For the hardest questions; the chat model when null.")


class BaseUrls(WireModel):
    """Each provider's address (null: the API's own, or for Ollama OLLAMA_HOST or the local
    one); the chat provider's is ``baseUrl`` when that is set."""

    anthropic: str | None = None
    openai: str | None = None
    ollama: str | None = None


class BaseUrlsUpdate(Params):
    """Only the providers sent change; null removes one."""

    anthropic: str | None = Field(None, max_length=2000)
    openai: str | None = Field(None, max_length=2000)
    ollama: str | None = Field(None, max_length=2000)


class KeysModel(WireModel):
    # each keyed provider's key, masked (no docstring: it would become a schema description)
    anthropic: str | None = Field(description="Masked; null when not set.")
    openai: str | None = Field(description="Masked; null when not set.")


MCP_NAME_PATTERN: Final = r"^[a-z0-9_-]{1,20}$"
"""An MCP server's name: ``NAME__tool`` then stays within the providers' 64 characters."""


class McpServerInfo(WireModel):
    name: str
    command: str | None = Field(description="The program started over stdio; null for a URL.")
    args: list[str]
    env: dict[str, str] = Field(description="Names with masked values.")
    url: str | None = Field(description="The streamable HTTP endpoint; null for a command.")
    headers: dict[str, str] = Field(description="Names with masked values.")
    permission: Literal["allow", "ask", "deny"]


class SettingsResult(WireModel):
    provider: ProviderName | None
    base_url: str | None = Field(description="The chat provider's address.")
    base_urls: BaseUrls
    models: ModelsByPurpose = Field(
        description="MODEL on the chat provider, or PROVIDER:MODEL (e.g. ollama:qwen3:4b)."
    )
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
    mcp_servers: list[McpServerInfo] = Field(
        description="MCP servers whose tools the model may call, as NAME__tool."
    )
    config_file: str = Field(description="Where settings/update saves them.")


class McpServerParams(Params):
    command: str | None = Field(None, min_length=1, max_length=1000)
    args: list[str] = Field(default_factory=list, max_length=100)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = Field(None, pattern=r"^https?://", max_length=2000)
    headers: dict[str, str] = Field(default_factory=dict)
    permission: Literal["allow", "ask", "deny"] = Field(
        "ask", description="Its tools run freely, after tool/confirm (the default), or never."
    )


class ModelsUpdate(Params):
    chat: str | None = Field(None, max_length=200)
    fast: str | None = Field(None, max_length=200)
    deep: str | None = Field(None, max_length=200)


class SettingsUpdateParams(Params):
    # settings/update's params, the keys (``NAMEApiKey``, one per keyed provider) last (no
    # docstring: it would become a schema description)

    provider: ProviderName | None = None
    base_url: str | None = Field(None, max_length=2000, description="The chat provider's.")
    base_urls: BaseUrlsUpdate | None = None
    models: ModelsUpdate | None = Field(
        None, description="MODEL on the chat provider, or PROVIDER:MODEL (e.g. ollama:qwen3:4b)."
    )
    daily_budget_usd: float | None = Field(None, gt=0)
    monthly_budget_usd: float | None = Field(None, gt=0)
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
    mcp_servers: (
        dict[Annotated[str, StringConstraints(pattern=MCP_NAME_PATTERN)], McpServerParams | None]
        | None
    ) = Field(
        None,
        max_length=50,
        description="Add or replace servers by name (either command, args and env, or url and "
        "headers); null removes one. Servers not named stay as they are.",
    )
    anthropic_api_key: str | None = Field(None, max_length=500, description="Write-only.")
    openai_api_key: str | None = Field(None, max_length=500, description="Write-only.")


class SettingsConfirmParams(WireModel):
    """The server request ``settings/confirm``: may this MCP server, given over the wire, run?"""

    server: str = Field(description="The server's name ([mcp.servers.NAME]).")
    command_line: str | None = Field(
        description="The exact command line it would start (environment variables first)."
    )
    url: str | None = Field(description="The URL it would connect to (a streamable HTTP server).")
    title: str = Field(description="The question, in words.")


class SettingsConfirmResult(WireModel):
    approved: bool


SETTINGS_CONFIRM: Final = ServerRequest(
    "settings/confirm", SettingsConfirmParams, SettingsConfirmResult
)
"""May this MCP server, new or changed by settings/update, run?"""

SETTINGS_GET: Final = ClientRequest("settings/get", Empty, SettingsResult)
SETTINGS_UPDATE: Final = ClientRequest("settings/update", SettingsUpdateParams, SettingsResult)
