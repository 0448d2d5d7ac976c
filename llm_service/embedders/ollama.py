"""Ollama's ``POST /api/embed`` (batch ``input``) over an Ollama connection (the chat
provider's, when given), with its error translation."""

from __future__ import annotations

from typing import Unpack

from llm_service.connections.ollama import OllamaConnection, OllamaResponseError, decode_json
from llm_service.embedders.base import Batch, Embedder, EmbedderOptions
from llm_service.errors import LLMError
from llm_service.providers.common import count


class OllamaEmbedder(Embedder):
    """Embedding models served by Ollama (``nomic-embed-text``, ``bge-m3``, ...)."""

    name = "Ollama"
    kind = "ollama"
    default_batch_size = 32
    default_timeout = 120.0  # a model may have to load first

    def __init__(
        self,
        model: str,
        *,
        connection: OllamaConnection | None = None,
        **options: Unpack[EmbedderOptions],
    ) -> None:
        """``OllamaEmbedder("nomic-embed-text", base_url=...)``, or over a ``connection=``
        shared with the chat provider (its URL and timeout apply)."""
        super().__init__(model, **options)
        self._owns_connection = connection is None
        if connection is None:
            connection = OllamaConnection(self.base_url, timeout=self.timeout)
        self.connection = connection
        self.base_url = connection.base_url

    async def _embed_once(self, texts: list[str]) -> Batch:
        response = await self.connection.http().post(
            "/api/embed",
            json={"model": self.model, "input": texts, "truncate": True},
            timeout=self.timeout,
        )
        body = decode_json(response.status_code, response.content, response.headers)
        embeddings = body.get("embeddings")
        if not isinstance(embeddings, list):
            raise OllamaResponseError("/api/embed has no embeddings list")
        return Batch(embeddings, count(body.get("prompt_eval_count")))

    def _convert_error(self, exc: Exception) -> LLMError:
        return self.connection.convert_error(exc)

    async def aclose(self) -> None:
        if self._owns_connection:
            await self.connection.aclose()
