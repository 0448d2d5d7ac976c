"""Wire models of the session: initialize, health, models/list, $/cancelRequest.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal

from pydantic import Field

from llm_service.profiles import ProviderName
from plugin_bridge.wire.models.base import (
    ClientNotification,
    ClientRequest,
    Empty,
    Notification,
    Params,
    ToolFormat,
    WireModel,
)
from plugin_bridge.wire.protocol import INITIALIZE, RequestId


class ClientInfo(Params):
    name: str = Field(
        max_length=200,
        description="Client name: ai-bridge-assistant for the Obsidian plugin (its manifest id).",
    )
    version: str = Field(max_length=100)


class InitializeParams(Params):
    token: str = Field(max_length=1000, description="The token from the info file.")
    protocol_version: int = Field(description="Protocol version the client speaks (1).")
    client: ClientInfo


class ServerInfo(WireModel):
    name: str
    version: str


class Capabilities(WireModel):
    methods: list[str] = Field(
        description="The methods this caller may call: every one for the info file's token, "
        "those of its scope for a client key."
    )
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


class CallerInfo(WireModel):
    name: str = Field(description="The client key's name; 'owner' with the info file's token.")
    scope: Literal["read", "chat", "write", "owner"] = Field(
        description="What it may do: read (search and read notes), chat (also converse), write "
        "(also write notes, each reviewed), owner (everything, settings too)."
    )


class InitializeResult(WireModel):
    protocol_version: int
    server: ServerInfo
    capabilities: Capabilities
    vault: VaultInfo
    caller: CallerInfo | None = Field(
        None, description="Who this connection is (a phone's pairing says so)."
    )


class IndexStatus(WireModel):
    notes: int = Field(description="Notes in the search index.")
    pending: int = Field(
        description="Files waiting to be indexed (at least 1 until the first scan has listed "
        "the vault); 0: the index is complete."
    )
    done: int = Field(0, description="Files indexed so far of total.")
    total: int = Field(
        0,
        description="Files the indexing under way covers (a scan's new, changed and deleted "
        "files, plus changes queued meanwhile); 0 when idle and while the vault is being listed.",
    )
    embedder: EmbedderStatus | None = Field(None, description="null: lexical search only.")
    unreadable_pdfs: int = Field(
        0, description="PDFs not indexed: encrypted, damaged or over the size limit (pdf_max_mb)."
    )


class McpServerStatus(WireModel):
    name: str
    state: Literal["running", "starting", "failed"]
    tools: int = Field(description="How many of its tools the model is offered now.")
    error: str | None = Field(None, description="Why it last failed; null while it runs.")


class HealthResult(WireModel):
    status: Literal["ok"]
    version: str
    provider: str | None = Field(description="anthropic, openai, ollama, or null without one.")
    model: str | None
    index: IndexStatus
    recommended_models: dict[str, list[str]]
    supported_formats: list[ToolFormat] = Field(
        description="Every format tools/list and GET /api/local-llm/tools accept."
    )
    tool_count: int = Field(description="The tools a conversation's model is offered.")
    mcp_servers: list[McpServerStatus] = Field(
        description="The MCP servers whose tools the model may call ([mcp.servers.NAME])."
    )
    bots: dict[str, str] = Field(
        default_factory=dict,
        description="Each configured chat-app bot ([telegram], [discord]): running, starting, "
        "or 'failed: ' and one sentence saying why.",
    )


class ModelsListParams(Params):
    refresh: bool = Field(False, description="Ask the provider now instead of the 24 h cache.")
    provider: ProviderName | None = Field(
        None, description="Whose models: any configured provider; default the chat provider's."
    )


class ModelInfoModel(WireModel):
    id: str
    display_name: str | None
    context_window: int | None
    max_output_tokens: int | None
    supports_tools: bool | None
    supports_images: bool | None = Field(
        None, description="The model accepts images (context images are sent); null: unknown."
    )
    embedding: bool | None = Field(
        None,
        description="An embedding model (by its capabilities or name): never offered for chat, "
        "only as an embedder.",
    )
    input_price_per_mtok: float | None = Field(description="USD; null when unknown, never 0.")
    output_price_per_mtok: float | None = Field(description="USD; null when unknown, never 0.")


class ModelsListResult(WireModel):
    models: list[ModelInfoModel]
    source: Literal["api", "cache", "catalog"] = Field(
        description="Asked now, from the 24 h cache, or the built-in list (provider unreachable)."
    )


class CancelRequestParams(ClientNotification):
    METHOD: ClassVar[str] = "$/cancelRequest"

    id: RequestId = Field(description="The id of the request to cancel.")


class ServerProof(Notification):
    """``$/serverProof``: the first frame of a connection opened with a ``nonce``."""

    METHOD: ClassVar[str] = "$/serverProof"

    proof: str = Field(
        description="base64url (no padding) of HMAC-SHA256(key = the token's UTF-8 bytes, "
        "message = the nonce's UTF-8 bytes as sent in the URL)."
    )


SESSION_INITIALIZE: Final = ClientRequest(INITIALIZE, InitializeParams, InitializeResult)
HEALTH: Final = ClientRequest("health", Empty, HealthResult)
MODELS_LIST: Final = ClientRequest("models/list", ModelsListParams, ModelsListResult)
