"""Embedders: texts to unit-length float32 vectors, beside the chat providers (no Obsidian
knowledge). numpy and each SDK load on first use."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from llm_service.embedders.base import Embedder, EmbedderOptions, estimate_tokens
from llm_service.embedders.spec import make_embedder, parse_spec
from llm_service.embedders.throttle import Throttle

if TYPE_CHECKING:
    from llm_service.embedders.fake import FakeEmbedder
    from llm_service.embedders.model2vec import Model2VecEmbedder
    from llm_service.embedders.ollama import OllamaEmbedder
    from llm_service.embedders.openai import OpenAIEmbedder

_LAZY = {
    "FakeEmbedder": "llm_service.embedders.fake",
    "Model2VecEmbedder": "llm_service.embedders.model2vec",
    "OllamaEmbedder": "llm_service.embedders.ollama",
    "OpenAIEmbedder": "llm_service.embedders.openai",
}

__all__ = [
    "Embedder",
    "EmbedderOptions",
    "FakeEmbedder",
    "Model2VecEmbedder",
    "OllamaEmbedder",
    "OpenAIEmbedder",
    "Throttle",
    "estimate_tokens",
    "make_embedder",
    "parse_spec",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llm_service.embedders' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
