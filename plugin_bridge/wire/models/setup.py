"""Wire models of what the plugin's setup card uses: runtimes/detect and embedder/download.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import ClassVar, Final

from pydantic import Field

from llm_service.embedders.hub import DEFAULT_EMBEDDER_MODEL, REPO_PATTERN
from llm_service.runtimes import RuntimeKind
from plugin_bridge.wire.models.base import ClientRequest, Empty, Notification, Params, WireModel
from plugin_bridge.wire.protocol import RequestId


class RuntimeModelInfo(WireModel):
    id: str
    supports_tools: bool | None = Field(description="null: the runtime does not say.")
    embedding: bool = Field(description="An embedding model (for the embedder setting).")


class RuntimeInfo(WireModel):
    kind: RuntimeKind
    base_url: str = Field(
        description="What settings/update's baseUrl takes: Ollama's root (provider ollama), "
        "LM Studio's /v1 (provider openai)."
    )
    reachable: bool = Field(description="The runtime's API answered.")
    models: list[RuntimeModelInfo]


class RuntimesDetectResult(WireModel):
    runtimes: list[RuntimeInfo] = Field(description="Ollama, then LM Studio.")


class EmbedderDownloadParams(Params):
    model: str = Field(
        DEFAULT_EMBEDDER_MODEL,
        max_length=200,
        pattern=REPO_PATTERN,
        description="A model2vec model on the Hugging Face hub (owner/name).",
    )


class EmbedderDownloadResult(WireModel):
    embedder: str = Field(description="The embedder now in use: model2vec:<folder>.")


class EmbedderDownloadProgress(Notification):
    """Sent to the requesting client while embedder/download runs."""

    METHOD: ClassVar[str] = "embedder/downloadProgress"

    request_id: RequestId
    done: int = Field(description="Bytes downloaded so far.")
    total: int = Field(description="Bytes of the model's files (as the hub announced them).")


RUNTIMES_DETECT: Final = ClientRequest("runtimes/detect", Empty, RuntimesDetectResult)
EMBEDDER_DOWNLOAD: Final = ClientRequest(
    "embedder/download", EmbedderDownloadParams, EmbedderDownloadResult
)
