"""Wire models of semantic search: vault/related, index/progress, index/confirmEmbedding."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from plugin_bridge.wire.models import Params, WireModel


class RelatedParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative path of the note.")
    limit: int = Field(10, ge=1, le=50)


class RelatedNote(WireModel):
    path: str
    title: str
    score: float = Field(description="Cosine similarity to the note, -1..1; higher is closer.")
    links_to: bool = Field(description="The note asked about links to this one.")
    linked_from: bool = Field(description="This one links to the note asked about.")


class RelatedResult(WireModel):
    results: list[RelatedNote]
    ready: bool = Field(description="False: no vectors yet (no embedder, or still embedding).")


class IndexProgress(WireModel):
    """Sent to every client while the embedding job runs."""

    phase: Literal["loading", "embedding", "confirm", "ready", "error"] = Field(
        description="confirm: waiting for index/confirmEmbedding (a paid embed over the limit)."
    )
    done: int
    total: int
    model: str
    estimated_tokens: int | None = Field(None, description="With phase confirm.")
    estimated_usd: float | None = Field(None, description="With phase confirm; null: unknown.")
    error: str | None = Field(None, description="With phase error: one sentence.")


class ConfirmEmbeddingResult(WireModel):
    waiting: bool = Field(description="True when a paid embed was waiting and now runs.")
