"""Ollama's ``POST /api/embed`` (batch ``input``) over the chat provider's httpx client, with
its error translation."""

from __future__ import annotations

from typing import Unpack

from llm_service.embedders.base import Batch, Embedder, EmbedderOptions
from llm_service.errors import LLMError
from llm_service.providers.common import count
from llm_service.providers.ollama import OllamaProvider, OllamaResponseError, decode_json


class OllamaEmbedder(Embedder):
    """Embedding models served by Ollama (``nomic-embed-text``, ``bge-m3``, ...)."""

    name = "Ollama"
    kind = "ollama"
    default_batch_size = 32
    default_timeout = 120.0  # a model may have to load first

    def __init__(self, model: str, **options: Unpack[EmbedderOptions]) -> None:
        super().__init__(model, **options)
        self._api = OllamaProvider(base_url=self.base_url, timeout=self.timeout)
        self.base_url = self._api.base_url

    async def _embed_once(self, texts: list[str]) -> Batch:
        response = await self._api._http().post(
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
        return self._api._convert_error(exc)

    async def aclose(self) -> None:
        await self._api.aclose()
