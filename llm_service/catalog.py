"""What is known about a model: ``ModelInfo``, filled from the API and a built-in catalog.

The catalog holds what the APIs do not say (context window, output limit, tool support) for the
models this project recommends; prices come from :mod:`llm_service.pricing`. Unknown values stay
None: a local model's price is unknown, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from llm_service.pricing import RECOMMENDED_MODELS, price_for


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model a provider serves; None where unknown. Prices are USD per million tokens."""

    id: str
    display_name: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    supports_tools: bool | None = None
    supports_images: bool | None = None
    """The model accepts images (vision); None where unknown."""
    input_price_per_mtok: float | None = None
    output_price_per_mtok: float | None = None
    embedding: bool | None = None
    """An embedding model (Ollama's ``embedding`` capability), never offered for chat."""


def is_chat_model(info: ModelInfo) -> bool:
    """Whether ``info`` may be offered as a chat model: not an embedding model by what the
    server says, nor by its name (``nomic-embed-text``, ``text-embedding-3-small``)."""
    return not info.embedding and "embed" not in info.id.lower()


_LIMITS: Final[dict[str, tuple[int, int]]] = {
    # model id prefix -> (context window, max output tokens)
    "claude-opus-": (200_000, 32_000),
    "claude-sonnet-": (200_000, 64_000),
    "claude-haiku-": (200_000, 64_000),
    "gpt-6": (400_000, 128_000),
    "gpt-5": (400_000, 128_000),
    "gpt-4.1": (1_047_576, 32_768),
    "gpt-4o": (128_000, 16_384),
    "o3": (200_000, 100_000),
    "o4-mini": (200_000, 100_000),
}


_SEES: Final = ("claude-", "gpt-4o", "gpt-4.1", "gpt-5", "gpt-6", "chatgpt-4o", "o1", "o3", "o4")
"""Model id prefixes of models that accept images."""
_TEXT_ONLY: Final = ("gpt-3.5", "gpt-4-0", "gpt-4-32k", "o1-mini", "o3-mini")
"""... and of those that do not (checked first)."""


def sees_images(model: str) -> bool | None:
    """Whether the catalog knows ``model`` to accept images (None: it does not know it)."""
    if model.startswith(_TEXT_ONLY):
        return False
    return True if model.startswith(_SEES) else None


def described(info: ModelInfo, provider: str | None = None) -> ModelInfo:
    """``info`` with what the catalog and ``provider``'s prices know added (the API's values
    win; see :func:`llm_service.pricing.price_for` for ``provider``)."""
    limits = next((v for k, v in _LIMITS.items() if info.id.startswith(k)), None)
    price = price_for(info.id, provider)
    return replace(
        info,
        context_window=info.context_window or (limits[0] if limits else None),
        max_output_tokens=info.max_output_tokens or (limits[1] if limits else None),
        supports_tools=info.supports_tools
        if info.supports_tools is not None
        else (True if limits else None),
        supports_images=info.supports_images
        if info.supports_images is not None
        else sees_images(info.id),
        input_price_per_mtok=info.input_price_per_mtok
        if info.input_price_per_mtok is not None
        else (price.input if price else None),
        output_price_per_mtok=info.output_price_per_mtok
        if info.output_price_per_mtok is not None
        else (price.output if price else None),
    )


def catalog(provider: str) -> list[ModelInfo]:
    """The recommended models of ``provider`` ("anthropic", "openai", "ollama"), for offline use."""
    return [described(ModelInfo(model), provider) for model in RECOMMENDED_MODELS.get(provider, [])]


def max_output_for(model: str) -> int | None:
    """The model's own output limit, where the catalog knows it."""
    return described(ModelInfo(model)).max_output_tokens
