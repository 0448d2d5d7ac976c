"""A deterministic embedder for tests and demos: hashed character n-grams, no model, no network.

Texts sharing words (or, in CJK text, characters and character pairs) get close vectors; it
knows no synonyms, so it is a floor for what a real model does, not a stand-in for its quality.
"""

from __future__ import annotations

import re
import zlib
from typing import TYPE_CHECKING, Any, Final, Unpack

from llm_service import lazy
from llm_service.embedders.base import Batch, Embedder, EmbedderOptions
from llm_service.errors import LLMError

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")

_WORD: Final = re.compile(r"\w+")


class FakeEmbedder(Embedder):
    """``FakeEmbedder(dims=64)``; ``calls`` counts batches and ``texts_seen`` every text sent."""

    name = "fake"
    kind = "fake"

    def __init__(
        self, model: str = "hashed-ngrams", dims: int = 128, **options: Unpack[EmbedderOptions]
    ) -> None:
        options.setdefault("backoff_base", 0.0)
        super().__init__(model, **options)
        self.dims = dims
        self.calls = 0
        self.texts_seen: list[str] = []

    async def _embed_once(self, texts: list[str]) -> Batch:
        self.calls += 1
        self.texts_seen.extend(texts)
        return Batch([self.vector(text) for text in texts], sum(len(t) // 4 + 1 for t in texts))

    def vector(self, text: str) -> Any:
        """The raw (not normalised) vector of ``text``."""
        assert self.dims is not None
        out = np.zeros(self.dims, dtype=np.float32)
        for feature in _features(text.casefold()):
            code = zlib.crc32(feature.encode())
            out[code % self.dims] += 1.0 if code & 0x80000000 else -1.0
        return out

    def _convert_error(self, exc: Exception) -> LLMError:
        return LLMError(f"The fake embedder failed: {exc}.", code="unknown", provider=self.name)


def _features(text: str) -> list[str]:
    """Whole words, plus character trigrams of long words and bigrams of non-ASCII runs."""
    features: list[str] = []
    for word in _WORD.findall(text):
        features.append(word)
        if word.isascii():
            if len(word) > 4:
                features += [word[i : i + 3] for i in range(len(word) - 2)]
        else:
            features += list(word) + [word[i : i + 2] for i in range(len(word) - 1)]
    return features
