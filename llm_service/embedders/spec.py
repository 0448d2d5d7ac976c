"""An embedder spec ``KIND:MODEL`` as an embedder: ``ollama:``, ``openai:``, ``model2vec:``
(``fake:`` for demos and tests)."""

from __future__ import annotations

from typing import Final, Unpack

from llm_service.embedders.base import Embedder, EmbedderOptions
from llm_service.embedders.fake import FakeEmbedder
from llm_service.embedders.model2vec import Model2VecEmbedder
from llm_service.embedders.ollama import OllamaEmbedder
from llm_service.embedders.openai import OpenAIEmbedder

KINDS: Final = ("ollama", "openai", "model2vec", "fake")


def parse_spec(spec: str) -> tuple[str, str]:
    """``(kind, model)`` from ``"kind:model"``; ValueError with the accepted forms otherwise."""
    kind, sep, model = spec.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in KINDS or not model.strip():
        raise ValueError(
            f"The embedder {spec!r} is not one of ollama:MODEL, openai:MODEL, model2vec:PATH "
            "(or fake:NAME)."
        )
    return kind, model.strip()


def make_embedder(
    spec: str, *, api_key: str | None = None, **options: Unpack[EmbedderOptions]
) -> Embedder:
    """The embedder ``spec`` names; SDKs load on its first call, a model2vec folder too."""
    kind, model = parse_spec(spec)
    if kind == "ollama":
        return OllamaEmbedder(model, **options)
    if kind == "openai":
        return OpenAIEmbedder(model, api_key, **options)
    if kind == "model2vec":
        return Model2VecEmbedder(model, **options)
    return FakeEmbedder(model, **options)
