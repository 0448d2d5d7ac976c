"""One place that names the providers and builds them: ``make_provider("anthropic:claude-…")``.

:data:`ProviderName` is the list of providers; the bridge's CLI choices, settings validation and
wire enum (and, through the generated schema, the plugin's lists) are derived from it. A model
spec is ``provider:model`` or ``provider/model``, split only when the part before the first
``:`` or ``/`` is a provider name: Ollama tags (``ollama:llama3.1:8b``) keep their ``:`` and LM
Studio ids (``qwen/qwen3-4b``) stay whole. Nothing here imports an SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, NamedTuple, Unpack, get_args

from llm_service.errors import UnknownProviderError

if TYPE_CHECKING:
    from llm_service.providers.base import Provider, ProviderOptions

ProviderName = Literal["anthropic", "openai", "ollama"]
"""Every provider ``llm_service`` builds, by the name specs and settings use."""
PROVIDER_NAMES: Final[tuple[ProviderName, ...]] = get_args(ProviderName)


class ModelSpec(NamedTuple):
    """A model, and the provider that serves it when the spec named one (a NamedTuple, not a
    dataclass: the command line imports this module before it listens)."""

    provider: ProviderName | None
    model: str

    def __str__(self) -> str:
        if self.provider is None:
            return self.model
        return f"{self.provider}:{self.model}" if self.model else self.provider


def provider_name(name: str) -> ProviderName | None:
    """``name`` as a provider name (any case, spaces around ignored), or None."""
    lowered = name.strip().lower()
    return next((known for known in PROVIDER_NAMES if known == lowered), None)


def parse_model_spec(spec: str) -> ModelSpec:
    """``"anthropic:claude-…"`` or ``"openai/gpt-…"`` as provider and model. A spec whose part
    before the first ``:`` or ``/`` is not a provider name is a model of its own, provider None
    (``"qwen/qwen3-4b"``, ``"llama3.1:8b"``); a provider name alone has the model ``""``."""
    spec = spec.strip()
    name = provider_name(spec)
    if name is not None:
        return ModelSpec(name, "")
    cuts = [i for i in (spec.find(":"), spec.find("/")) if i >= 0]
    if cuts:
        cut = min(cuts)
        name = provider_name(spec[:cut])
        if name is not None:
            return ModelSpec(name, spec[cut + 1 :].strip())
    return ModelSpec(None, spec)


def unknown_provider(given: str) -> UnknownProviderError:
    """The error for ``given``, which names no provider (one sentence with the accepted forms)."""
    forms = ", ".join(f"{name}:MODEL" for name in PROVIDER_NAMES)
    return UnknownProviderError(f"{given.strip()!r} names no known provider: use {forms}.")


def provider_class(name: ProviderName) -> type[Provider]:
    """The class of provider ``name`` (its module is imported, its SDK is not)."""
    if name == "anthropic":
        from llm_service.providers.anthropic import AnthropicProvider

        return AnthropicProvider
    if name == "openai":
        from llm_service.providers.openai import OpenAIProvider

        return OpenAIProvider
    from llm_service.providers.ollama import OllamaProvider

    return OllamaProvider


def make_provider(
    spec: str, *, api_key: str | None = None, **options: Unpack[ProviderOptions]
) -> Provider:
    """The provider ``spec`` names, with the spec's model as its default model:
    ``make_provider("anthropic:claude-haiku-5-5")``, ``make_provider("ollama:llama3.1:8b",
    base_url=...)``, or ``make_provider("openai")`` (no default model: each call names one).

    ``api_key`` defaults to the SDK's environment variable; Ollama takes none (ValueError). A
    spec that names no provider raises :class:`~llm_service.errors.UnknownProviderError`."""
    parsed = parse_model_spec(spec)
    if parsed.provider is None:
        raise unknown_provider(spec)
    return provider_class(parsed.provider).build(parsed.model or None, api_key, **options)
