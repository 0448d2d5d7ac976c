"""Embedding API replies, byte for byte as Ollama's ``/api/embed`` and OpenAI's
``/v1/embeddings`` send them (OpenAI's as base64 float32 when asked, as the SDK does)."""

from __future__ import annotations

import base64
import struct
from typing import Any

from tests.fakes.http import Reply

OLLAMA_MODEL = "nomic-embed-text"
OPENAI_MODEL = "text-embedding-3-small"


def ollama_reply(vectors: list[list[float]], tokens: int = 7) -> Reply:
    """``POST /api/embed``'s answer."""
    return Reply.json(
        {
            "model": OLLAMA_MODEL,
            "embeddings": vectors,
            "total_duration": 14143917,
            "load_duration": 1019500,
            "prompt_eval_count": tokens,
        }
    )


def b64(vector: list[float]) -> str:
    """A vector as OpenAI's base64 encoding: little-endian float32s."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()


def openai_reply(vectors: list[list[float]], *, as_base64: bool = True, tokens: int = 9) -> Reply:
    """``POST /v1/embeddings``'s answer, rows in reverse order (clients must sort by index)."""
    data: list[dict[str, Any]] = [
        {"object": "embedding", "index": i, "embedding": b64(v) if as_base64 else v}
        for i, v in enumerate(vectors)
    ]
    return Reply.json(
        {
            "object": "list",
            "data": data[::-1],
            "model": OPENAI_MODEL,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        },
        headers={"x-request-id": "req_embed_1"},
    )


def rate_limited(retry_after: str = "0") -> Reply:
    """A 429 with Retry-After, in OpenAI's error shape (Ollama proxies send the same)."""
    return Reply.json(
        {"error": {"message": "Rate limit reached for requests", "type": "requests"}},
        status=429,
        headers={"retry-after": retry_after},
    )
