"""Embeddings through the ``openai`` SDK on any base URL (OpenAI, LM Studio, vLLM, ...).

The SDK asks for base64 unless told otherwise; we ask for base64 ourselves (a quarter of the
bytes) and decode it with numpy, and accept float lists from servers that ignore the format.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, Unpack

from llm_service import lazy
from llm_service.connections.errors import UnreadableResponse
from llm_service.connections.openai import OpenAIConnection
from llm_service.embedders.base import Batch, Embedder, EmbedderOptions
from llm_service.errors import LLMError
from llm_service.providers.common import count

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")


class OpenAIEmbedder(Embedder):
    """OpenAI's embedding models, or any OpenAI-compatible ``/v1/embeddings`` at ``base_url``."""

    name = "OpenAI"
    kind = "openai"
    default_batch_size = 128

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        *,
        name: str | None = None,
        connection: OpenAIConnection | None = None,
        **options: Unpack[EmbedderOptions],
    ) -> None:
        """``OpenAIEmbedder("text-embedding-3-small", key, base_url=...)``, or over a
        ``connection=`` shared with the chat provider (its key, URL, timeout and name apply)."""
        super().__init__(model, **options)
        self._owns_connection = connection is None
        if connection is None:
            connection = OpenAIConnection(
                api_key, base_url=self.base_url, timeout=self.timeout, name=name
            )
        self.connection = connection
        self.name = connection.name
        self.base_url = connection.base_url
        self.paid = self.base_url is None
        """The official API bills tokens; a server at a base URL is taken to be local."""

    async def _embed_once(self, texts: list[str]) -> Batch:
        response = await self.connection.client().embeddings.create(
            model=self.model, input=texts, encoding_format="base64", timeout=self.timeout
        )
        rows = sorted(response.data, key=lambda item: count(item.index))
        usage = getattr(response, "usage", None)
        return Batch(
            [_floats(row.embedding) for row in rows], count(getattr(usage, "prompt_tokens", 0))
        )

    def _convert_error(self, exc: Exception) -> LLMError:
        return self.connection.convert_error(exc)

    async def aclose(self) -> None:
        if self._owns_connection:
            await self.connection.aclose()


def _floats(raw: Any) -> Any:
    """One embedding: base64 of little-endian float32s, or a list of numbers as sent."""
    if not isinstance(raw, str):
        return raw
    try:
        return np.frombuffer(base64.b64decode(raw, validate=True), dtype="<f4")
    except (binascii.Error, ValueError) as exc:
        raise UnreadableResponse("an embedding is neither base64 float32 nor numbers") from exc
